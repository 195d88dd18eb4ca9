import ContactsTesting
import Foundation
import SyncCore
import SyncKit
import SyncTesting
import Synchronization
import Testing

@testable import ContactsModel
@testable import ContactsStore

/// The event log's outcome lines: each send or fetch ends in exactly one, "done" or "failed", never both.
@Suite("Event log: one line per send outcome")
struct SyncOutcomeLogTests {
    private static let start = Date(timeIntervalSince1970: 1_700_000_000)

    private func failure(_ work: SyncScheduler.Work, at seconds: Double) -> SyncScheduler.Failure {
        SyncScheduler.Failure(
            date: Self.start.addingTimeInterval(seconds), work: work, code: .networkFailure,
            message: "networkFailure: the server did not answer")
    }

    @Test("a send that fails logs 'send failed' only; one that succeeds logs 'send done' only")
    func failedThenDone() {
        var log = SyncOutcomeLog()
        var status = SyncScheduler.Status(decision: .idle)
        #expect(log.lines(for: status).isEmpty)

        log.began(.send)
        status.decision = .running(.send, trigger: .localChanges)
        #expect(log.lines(for: status).isEmpty)
        status.lastFailure = failure(.send, at: 1)
        status.consecutiveFailures = 1
        #expect(
            log.lines(for: status) == [
                .init(text: "send failed: networkFailure: the server did not answer", isError: true)
            ])
        status.decision = .deferred(.offline(attempt: 1), retryIn: .seconds(1))
        #expect(log.lines(for: status).isEmpty, "a status that records no new outcome adds nothing")

        log.began(.send)
        status.lastSuccess = Self.start.addingTimeInterval(2)
        status.lastSuccessWork = .send
        status.consecutiveFailures = 0
        #expect(log.lines(for: status) == [.init(text: "send done", isError: false)])
    }

    @Test("a send with nothing to send logs nothing; a failure before anything began is still logged")
    func nothingBegan() {
        var log = SyncOutcomeLog()
        var status = SyncScheduler.Status(decision: .idle)
        status.lastSuccess = Self.start
        status.lastSuccessWork = .send
        #expect(log.lines(for: status).isEmpty)
        status.lastFailure = failure(.fetch, at: 1)
        #expect(log.lines(for: status).map(\.text) == ["fetch failed: networkFailure: the server did not answer"])
    }

    @Test("two sends that began before the first outcome arrived each get their line")
    func overlapping() {
        var log = SyncOutcomeLog()
        log.began(.send)
        log.began(.send)
        var status = SyncScheduler.Status(decision: .idle)
        status.lastSuccess = Self.start
        status.lastSuccessWork = .send
        #expect(log.lines(for: status).map(\.text) == ["send done"])
        status.lastSuccess = Self.start.addingTimeInterval(1)
        #expect(log.lines(for: status).map(\.text) == ["send done"])
        status.lastSuccess = Self.start.addingTimeInterval(2)
        #expect(log.lines(for: status).isEmpty, "no third send began")
    }

    @Test("a device that syncs by itself: every send that began ends in exactly one line, failed ones never say done")
    func device() async throws {
        try await withSyncingDevice { server, device, log in
            try device.contacts.add(Contact(name: "Ada Lovelace"))
            try await device.sync(fetch: false, send: true)
            // Every database request now gets 503: the manual send fails, and so do the scheduler's retries.
            server.faults.plan = FaultPlan(serviceUnavailable: 1, retryAfter: 0.01)
            try device.contacts.add(Contact(name: "Grace Hopper"))
            await #expect(throws: SyncError.self) { try await device.sync(fetch: false, send: true) }
            server.faults.plan = .none
            try await device.sync(fetch: false, send: true)

            // Each send that began ends in exactly one line: a failed send that also said "done" would
            // leave more outcome lines than sends.
            try await waitUntil("every send that began has one outcome line, and nothing is pending") {
                let lines = log.lines
                return try device.store.outbox().isEmpty
                    && lines.count { $0.text == "sending" } == lines.count { $0.text.hasPrefix("send ") }
            } observed: {
                log.lines.map { ($0.isError ? "✖ " : "  ") + $0.text }.joined(separator: "\n")
            }
            let lines = log.lines
            let failed = lines.filter { $0.text.hasPrefix("send failed: ") }
            #expect(!failed.isEmpty, "the send during the 503s failed")
            #expect(failed.allSatisfy { $0.isError })
            #expect(failed.allSatisfy { $0.text.contains("serviceUnavailable") }, "\(failed)")
            #expect(lines.contains { $0.text == "send done" })
        }
    }
}

extension SyncOutcomeLogTests {
    @Test("a shared books' fetch that fails says so in its own line, never 'done'; one that succeeds says done")
    func sharedFetchOutcomes() async throws {
        try await withSyncingDevice { server, device, log in
            let lines = { log.lines.map { ($0.isError ? "✖ " : "  ") + $0.text }.joined(separator: "\n") }
            // Every database request gets 503: both engines' fetches fail.
            server.faults.plan = FaultPlan(serviceUnavailable: 1, retryAfter: 0.01)
            await #expect(throws: SyncError.self) { try await device.sync(fetch: true, send: false) }
            try await waitUntil("the shared books' failed fetch has its line") {
                log.lines.contains { $0.text.hasPrefix("shared books: fetch failed: ") }
            } observed: {
                lines()
            }
            let failed = log.lines.filter { $0.text.hasPrefix("shared books: fetch failed: ") }
            #expect(failed.allSatisfy { $0.isError && $0.text.contains("serviceUnavailable") }, "\(failed)")

            server.faults.plan = .none
            let before = log.lines.count
            try await device.sync(fetch: true, send: false)
            try await waitUntil("the shared books' fetch that succeeded says done") {
                log.lines.dropFirst(before).contains { $0.text == "shared books: fetch done" }
            } observed: {
                lines()
            }
        }
    }

    /// Runs `body` with a device that syncs by itself, signed up to a new account on a real server, and the
    /// event lines it announces from before its sign-up on; stops the server afterwards.
    private func withSyncingDevice(
        _ body: (TestServer, ContactsDevice, ActivityLines) async throws -> Void
    ) async throws {
        try await TestServer.with { server in
            try await withTemporaryDirectory { directory in
                let device = try ContactsDevice(
                    .init(
                        dataDirectory: directory, deviceName: "a", serverURL: URL(string: server.baseURL)!,
                        automaticallySync: true, keyDerivation: cheapKeyDerivation,
                        // Sends at once under the load of the suite beside it: the hold is SyncSchedulerTests'.
                        holdsWorkUnderLoad: false))
                let log = ActivityLines(device.activity())
                try await device.account.signUp(
                    username: "ada", password: "correct horse battery", passphrase: testPassphrase)
                try await body(server, device, log)
            }
        }
    }
}

/// The event lines a device announces, collected as they come.
final class ActivityLines: Sendable {
    struct Line: Sendable {
        var text: String
        var isError: Bool
    }

    private final class Storage: Sendable {
        let lines = Mutex<[Line]>([])
    }

    private let storage = Storage()
    private let task: Task<Void, Never>

    init(_ activity: AsyncStream<ContactsDevice.Activity>) {
        let storage = self.storage
        task = Task {
            for await event in activity {
                switch event {
                case .event(let text, _): storage.lines.withLock { $0.append(Line(text: text, isError: false)) }
                case .failure(let text, _): storage.lines.withLock { $0.append(Line(text: text, isError: true)) }
                default: break
                }
            }
        }
    }

    deinit { task.cancel() }

    var lines: [Line] { storage.lines.withLock { $0 } }
}
