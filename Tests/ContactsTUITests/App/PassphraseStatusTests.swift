import ContactsStore
import Foundation
import SyncCore
import SyncKit
import Terminal
import Testing

@testable import ContactsTUI

/// The status pane of a device whose passphrase was changed on another device: it says so and that the
/// edits stay here, as the CLI does.
@Suite("Sync status pane: a passphrase changed elsewhere")
struct PassphraseStatusTests {
    @Test("a rejected passphrase: the state says it was changed on another device and the edits stay pending")
    func passphraseChangedElsewhere() {
        var status = Fixtures.idleStatus
        var failure = SyncScheduler.Failure(
            date: Fixtures.now, work: .send, code: .notAuthenticated,
            message: "notAuthenticated: the passphrase does not open this account's encrypted data")
        failure.reason = .passphraseRejected
        status.scheduler = SyncSchedule(
            SyncScheduler.Status(
                decision: .idle, lastSuccess: Fixtures.now.addingTimeInterval(-300), lastFailure: failure,
                pushConnected: true, consecutiveFailures: 1))
        status.pendingChanges = 1
        var state = Fixtures.state(width: 100, height: 30)
        state.status = status
        let grid = Renderer.render(state)
        let area = state.layout.status.content
        let lines = (area.row..<area.endRow).map { row in
            (area.column..<area.endColumn).map { grid[row, $0].grapheme }.joined()
                .trimmingCharacters(in: .whitespaces)
        }
        // The message wraps within the pane: read it as one text.
        let text = lines.joined(separator: " ")
        #expect(text.contains("✖ error: the passphrase was changed on another device"), "\(lines)")
        #expect(text.contains("enter the new one here to sync"), "\(lines)")
        #expect(lines.contains("Pending   1 change not on the server yet"), "\(lines)")
    }
}
