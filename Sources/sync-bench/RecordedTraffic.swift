import ArgumentParser
import Foundation
import SyncCore
import SyncTesting

/// The HTTP traffic of a `sync-bench contacts` run's upload and first download, and its replay against the plain
/// reference server.
///
/// How the bytes are known: the same vCards are imported again on a device of an account of their own
/// (`bench-reference`, on the same server), and its `contacts sync` (the upload) and a second device's (the
/// first download) go through a ``RecordingRelay``, which keeps every request's body and every answer's. The
/// measured commands never go through it. The replay then sends the same bodies, in as many requests, to
/// `sync-bench reference-server`, which answers each with the answer the real server gave: the same bytes each
/// way over the same loopback, through the app's own HTTP client, and no work on either side.
struct RecordedTraffic {
    typealias Exchange = RecordingRelay.Exchange

    /// The upload's exchanges and the download's, in the order their requests arrived.
    var upload: [Exchange]
    var download: [Exchange]

    /// Bytes and requests of one direction of a sync.
    struct Totals: Codable {
        var requests: Int
        /// Request bodies, in bytes.
        var sent: Int
        /// Answer bodies, in bytes.
        var received: Int

        init(_ exchanges: [Exchange]) {
            requests = exchanges.count
            sent = exchanges.reduce(0) { $0 + $1.sent }
            received = exchanges.reduce(0) { $0 + $1.received }
        }
    }

    /// Imports `cards` (`count` contacts) on device A of a new account, then records A's sync and B's through a
    /// relay to `server`, keeping the bodies in `directory`.
    static func capture(
        cards: String, count: Int, contacts: String, server: String, in directory: URL
    ) async throws -> RecordedTraffic {
        let relay = try await RecordingRelay.start(forwardingTo: server, savingIn: directory)
        let commands = try ContactsCommands(contacts: contacts, server: relay.baseURL, name: "contacts-bench-reference")
        do {
            try await onThread {
                try commands.signUp(username: "bench-reference")
                _ = try commands.command("A", ["import", cards, "--no-sync"])
            }
            relay.record("up")
            _ = try await onThread { try commands.command("A", ["sync"]) }
            relay.record("down")
            let synced = try await onThread { try commands.command("B", ["sync"]).output }
            relay.record(nil)
            guard synced.contains("synced: \(count) contacts") else {
                throw BenchError(description: "the reference's download did not bring \(count) contacts: \(synced)")
            }
        } catch {
            commands.remove()
            await relay.stop()
            throw error
        }
        commands.remove()
        await relay.stop()
        return RecordedTraffic(upload: relay.exchanges(of: "up"), download: relay.exchanges(of: "down"))
    }

    /// The seconds each of `runs` replays of `exchanges` took against a plain reference server: each request's
    /// body read from its file before its clock starts, the requests one after another (the app keeps at most
    /// two uploads in flight, and fetches its pages one by one).
    static func replay(_ exchanges: [Exchange], runs: Int) async throws -> [Double] {
        var times = [Double](repeating: 0, count: runs)
        for window in windows(exchanges) {
            let plain = try await ServerProcess.start(named: "reference-server") { _ in
                [CommandLine.arguments[0], ReferenceServerCommand.configuration.commandName!]
            }
            defer { plain.stop() }
            let client = TestClient(baseURL: plain.baseURL)
            for exchange in window {
                let stored = try await client.send(
                    .put, "/answers/\(exchange.index)", body: try Data(contentsOf: exchange.response))
                if let failure = stored.failure { throw failure }
            }
            for run in 0..<runs {
                times[run] += try await replay(window, to: client)
            }
        }
        return times
    }

    /// The answers a plain server holds at once: a million contacts' download brings about 2 GB of them, so the
    /// exchanges are replayed a window at a time, each against a new server, and each run's times added up.
    static let windowBytes = 64 << 20

    private static func windows(_ exchanges: [Exchange]) -> [ArraySlice<Exchange>] {
        var windows: [ArraySlice<Exchange>] = []
        var start = 0
        var bytes = 0
        for (index, exchange) in exchanges.enumerated() {
            if index > start, bytes + exchange.received > windowBytes {
                windows.append(exchanges[start..<index])
                (start, bytes) = (index, 0)
            }
            bytes += exchange.received
        }
        if start < exchanges.count { windows.append(exchanges[start...]) }
        return windows
    }

    /// The seconds one replay of `exchanges` took, their answers checked.
    private static func replay(_ exchanges: ArraySlice<Exchange>, to client: TestClient) async throws -> Double {
        var elapsed = Duration.zero
        for exchange in exchanges {
            let body = try Data(contentsOf: exchange.request)
            let start = ContinuousClock.now
            let answer = try await client.send(
                .post, exchange.path, body: body, headers: [(ReferenceServerCommand.answerHeader, "\(exchange.index)")])
            elapsed += ContinuousClock.now - start
            guard answer.status == 200, answer.body.count == exchange.received else {
                throw BenchError(
                    description: "the plain server answered \(exchange.path) with \(answer.status), "
                        + "\(answer.body.count) bytes; \(exchange.received) expected")
            }
        }
        return elapsed.inSeconds
    }

    /// Runs a whole `contacts` command, which blocks its thread until the command ends, on a thread of its
    /// own: the relay's requests need the few threads Swift concurrency has.
    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }
}
