import ContactsStore
import Foundation
import SyncKit
import Terminal
import Testing

@testable import ContactsTUI

/// The status pane's push line after the server went away and came back.
@Suite("Sync status pane: reconnection")
struct ReconnectionStatusTests {
    private func pushLine(_ status: SyncStatus) -> String? {
        var state = Fixtures.state()
        state.status = status
        let grid = Renderer.render(state)
        let area = state.layout.status.content
        return (area.row..<area.endRow).map { row in
            (area.column..<area.endColumn).map { grid[row, $0].grapheme }.joined()
                .trimmingCharacters(in: .whitespaces)
        }.first { $0.hasPrefix("Push") }
    }

    @Test("connected again after a drop: 'reconnected at' and the time; while down: not connected")
    func reconnected() {
        var status = Fixtures.idleStatus
        #expect(pushLine(status) == "Push      connected")
        status.scheduler?.status.pushConnected = false
        status.reconnectedAt = Fixtures.now.addingTimeInterval(-90)
        #expect(pushLine(status) == "Push      not connected; polling for changes")
        status.scheduler?.status.pushConnected = true
        #expect(pushLine(status) == "Push      reconnected at 22:11:50")
    }

    @Test(
        "a drop and a connection again is a reconnection, also when the first status seen was connected already",
        arguments: [[false, true, false, true], [true, false, true]])
    func tracker(_ statuses: [Bool]) {
        var tracker = PushConnectionTracker()
        let changes = statuses.map { tracker.observe(pushConnected: $0) }
        // The app may start after the socket connected: its first status then says connected already.
        let expected: [PushConnectionTracker.Change?] =
            statuses.first == true
            ? [nil, .disconnected, .reconnected] : [nil, .connected, .disconnected, .reconnected]
        #expect(changes == expected)
        #expect(tracker.observe(pushConnected: true) == nil, "no change, nothing to log")
    }
}
