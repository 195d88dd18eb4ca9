import ContactsStore
import Foundation
import SyncCore
import SyncKit
import Terminal
import Testing

@testable import ContactsTUI

/// The sync status pane in each state the engine can be in, as a user reads it.
@Suite("Sync status pane")
struct StatusPaneTests {
    /// The status pane's lines of a 100×30 screen showing `status`.
    private func pane(_ status: SyncStatus, width: Int = 100, height: Int = 30, device: String? = nil) -> [String] {
        var state = Fixtures.state(width: width, height: height)
        state.status = status
        if let device { state.deviceName = device }
        let grid = Renderer.render(state)
        let area = state.layout.status.content
        return (area.row..<area.endRow).map { row in
            var line = ""
            for column in area.column..<area.endColumn { line += grid[row, column].grapheme }
            return String(line.reversed().drop { $0 == " " }.reversed())
        }
    }

    private static let base = Fixtures.idleStatus

    /// The Account entry of a pane's lines, its wrapped lines joined.
    private func account(_ lines: [String]) -> String? {
        let label = " Account   "
        guard let first = lines.firstIndex(where: { $0.hasPrefix(label) }) else { return nil }
        let indent = String(repeating: " ", count: label.count)
        let rest = lines[(first + 1)...].prefix { $0.hasPrefix(indent) }.map { $0.dropFirst(indent.count) }
        return ([lines[first].dropFirst(label.count)] + rest).joined(separator: " ")
    }

    @Test("records refused as tampered: counted, in the error colour, only when there are some")
    func tamperedCount() throws {
        var state = Fixtures.state(width: 100, height: 30)
        state.status = Self.base
        state.tamperedCount = 2
        let grid = Renderer.render(state)
        let area = state.layout.status.content
        let lines = (area.row..<area.endRow).map { row in
            (area.column..<area.endColumn).map { grid[row, $0].grapheme }.joined()
        }
        let text = lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(text.contains("Refused   2 records refused as tampered: see contacts tampered"), "\(lines)")
        let row = try #require(lines.firstIndex { $0.hasPrefix(" Refused") }, "\(lines)")
        #expect(grid[area.row + row, area.column + 11].style == Theme.error)
        state.tamperedCount = 0
        #expect(!Renderer.render(state).text.contains("Refused"))
    }

    @Test("idle: nothing to send, the time of the last sync, push connected, the account")
    func idle() {
        #expect(
            pane(Self.base) == [
                " State     ● idle",
                " Pending   nothing to send",
                " Next      idle",
                " Last sync 22:12:51 (29 s ago)",
                " Push      connected",
                " Account   ada on http://127.0.0.1:8080",
                "",
                "",
            ])
    }

    @Test("syncing: a long fetch shows how many changes arrived so far")
    func fetching() {
        var status = Self.base
        status.scheduler?.status.decision = .running(.fetch, trigger: .push)
        status.fetchedSoFar = 4200
        #expect(
            pane(status).prefix(3) == [
                " State     ↻ fetching · fetched 4,200", " Pending   nothing to send", " Next      fetching (push)",
            ])
    }

    @Test("syncing: a manual back up shows the changes still to send")
    func sending() {
        var status = Self.base
        status.manualRun = .send
        status.pendingChanges = 1234
        #expect(
            pane(status).prefix(2) == [
                " State     ↻ sending · 1,234 to go", " Pending   1,234 changes not on the server yet",
            ])
    }

    @Test("error: the message, wrapped, the pending count, and the scheduler's offline deferral")
    func offline() {
        var status = Self.base
        status.scheduler = SyncSchedule(
            SyncScheduler.Status(
                decision: .deferred(.offline(attempt: 3), retryIn: .seconds(8)),
                lastSuccess: Fixtures.now.addingTimeInterval(-300),
                lastFailure: SyncScheduler.Failure(
                    date: Fixtures.now, work: .send, code: .networkFailure,
                    message:
                        "networkFailure: could not connect to the server at http://127.0.0.1:8080 (connection refused)"
                ),
                pushConnected: false, consecutiveFailures: 3))
        status.pendingChanges = 1
        #expect(
            pane(status) == [
                " State     ✖ error: networkFailure: could not connect to the",
                "           server at http://127.0.0.1:8080 (connection",
                "           refused)",
                " Pending   1 change not on the server yet",
                " Next      deferred: offline — retry in 8 s (attempt 3)",
                " Last sync 22:08:20 (5 min ago)",
                " Push      not connected; polling for changes",
                " Account   ada on http://127.0.0.1:8080",
            ])
    }

    @Test("a session ended on another device: the state and the account say signed out and how to sign in again")
    func sessionEnded() {
        var status = Self.base
        var failure = SyncScheduler.Failure(
            date: Fixtures.now, work: .send, code: .notAuthenticated,
            message: "notAuthenticated: this session was ended on another device; sign in again")
        failure.reason = .sessionEnded
        status.scheduler = SyncSchedule(
            SyncScheduler.Status(
                decision: .idle, lastSuccess: Fixtures.now.addingTimeInterval(-300), lastFailure: failure,
                pushConnected: false, consecutiveFailures: 1))
        status.pendingChanges = 2
        let lines = pane(status).joined(separator: "\n")
        #expect(lines.contains("✖ error: signed out: this session was ended on\n"), "\(lines)")
        #expect(lines.contains("another device. Contacts and pending changes stay"), "\(lines)")
        #expect(lines.contains("Pending   2 changes not on the server yet"), "\(lines)")
        #expect(
            account(pane(status))
                == "ada: signed out; run contacts --server http://127.0.0.1:8080 --device laptop account signin",
            "\(lines)")
        // Nothing syncs until then: what the scheduler would do next is not shown.
        #expect(!lines.contains("Next ") && !lines.contains("Push "), "\(lines)")
    }

    @Test("an account whose storage is full: used and limit, and the edits stay pending")
    func storageFull() {
        var status = Self.base
        var failure = SyncScheduler.Failure(
            date: Fixtures.now, work: .send, code: .quotaExceeded, message: "quotaExceeded: over quota")
        failure.quota = StorageUsage(usedBytes: 1_048_000, limitBytes: 1_000_000)
        status.scheduler = SyncSchedule(
            SyncScheduler.Status(
                decision: .idle, lastSuccess: Fixtures.now.addingTimeInterval(-300), lastFailure: failure,
                pushConnected: true, consecutiveFailures: 1))
        status.pendingChanges = 3
        let lines = pane(status).joined(separator: "\n")
        #expect(lines.contains("the server's storage for this"), "\(lines)")
        #expect(lines.contains("(1.0 MB of 1.0 MB)"), "\(lines)")
        #expect(lines.contains("Pending   3 changes not on the server yet"), "\(lines)")
    }

    @Test("the scheduler's wait counts down between its statuses")
    func countdown() {
        var status = Self.base
        status.scheduler?.status.decision = .deferred(.offline(attempt: 2), retryIn: .seconds(8))
        status.schedulerStatusDate = Fixtures.now.addingTimeInterval(-3)
        #expect(status.decision(at: Fixtures.now) == "deferred: offline — retry in 5 s (attempt 2)")
        status.scheduler?.status.decision = .waiting(.send, in: .milliseconds(500), trigger: .localChanges)
        #expect(status.decision(at: Fixtures.now) == "sending in 0 s (debounce)")
    }

    @Test("a manual sync that failed is an error until a sync succeeds")
    func manualFailure() {
        var status = Self.base
        status.manualFailure = SyncStatus.Failure(date: Fixtures.now, message: "serviceUnavailable: try later")
        #expect(status.phase == .error("serviceUnavailable: try later"))
        status.scheduler?.status.lastSuccess = Fixtures.now.addingTimeInterval(1)
        #expect(status.phase == .idle)
    }

    @Test("opened without a server: the reason shows until the first sync succeeds; not signed in says so")
    func startupProblem() {
        var status = SyncStatus()
        status.scheduler = SyncSchedule(SyncScheduler.Status(decision: .idle))
        status.startupProblem = SyncStatus.Failure(date: Fixtures.now, message: "could not reach the sync server")
        #expect(pane(status).prefix(1) == [" State     ✖ error: could not reach the sync server"])
        // The command names the device (and a server given with --server), or it would sign in another; it
        // wraps rather than being cut short.
        #expect(account(pane(status)) == "not signed in: run contacts --device laptop account signin")
        var remote = status
        remote.server = "https://sync.example.org"
        #expect(
            account(pane(remote))
                == "not signed in: run contacts --server https://sync.example.org --device laptop account signin")
        remote.server = "http+unix://%2Frun%2Fuser%2F1000%2Fcontacts%2Fserver.sock"
        #expect(account(pane(remote, device: "default")) == "not signed in: run contacts account signin")
        status.scheduler?.status.lastSuccess = Fixtures.now
        #expect(status.phase == .error("could not reach the sync server"), "signed out, a success syncs nothing")
        status.account = "ada"
        #expect(status.phase == .idle)
    }

    @Test("a short pane keeps the state and the pending count")
    func compact() {
        var status = Self.base
        status.pendingChanges = 2
        #expect(pane(status, width: 40, height: 12) == [" State     ● idle", " Pending   2 changes not on the serv…"])
    }
}
