import Foundation
import SyncKit
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
        status.scheduler?.pushConnected = false
        status.reconnectedAt = Fixtures.now.addingTimeInterval(-90)
        #expect(pushLine(status) == "Push      not connected; polling for changes")
        status.scheduler?.pushConnected = true
        #expect(pushLine(status) == "Push      reconnected at 22:11:50")
    }
}
