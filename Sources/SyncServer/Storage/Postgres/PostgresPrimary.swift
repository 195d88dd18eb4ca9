import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The connection pool of the node that takes writes, among the nodes of one PostgreSQL cluster.
///
/// With one node, that node's pool, always. With several (a primary and its standbys, as
/// `pg_autoctl show uri` names them), it asks each which of them is a primary that takes writes (not in
/// recovery, not read-only: libpq's `target_session_attrs=read-write`) and pools connections to that
/// one. When one of its connections closes, or a request finds the node gone or read-only (a demoted
/// primary), ``lost(generation:)`` looks again, without holding requests up; once another node takes writes its
/// pool replaces the old one, which closes, and the requests still waiting on it are told
/// `serviceUnavailable` with `retryAfter` at once. A transaction cut by the failover was never
/// committed, so a client that retries loses nothing; one whose commit the old primary acknowledged
/// was on the synchronous standby first.
final class PostgresPrimary: Sendable {
    /// The pool of one node, numbered so that news of a lost node is taken for the pool it came from.
    struct Pool: Sendable {
        let client: PostgresClient
        let endpoint: PostgresAddress.Endpoint
        let generation: Int
        /// Ends the work on a connection of this pool that closes under it, and tells ``lost(generation:)``.
        let watch: PostgresConnectionWatch
        fileprivate let run: Task<Void, Never>
    }

    private struct State {
        var pool: Pool?
        var searching: Task<Void, Never>?
        var generation = 0
        var closed = false
    }

    let address: PostgresAddress
    private let logger: Logger
    private let state = Mutex(State())
    /// How long one node may take to answer whether it takes writes: long, as a node that answers ends a
    /// search at once whatever the others do, and a busy machine may take seconds to start a connection.
    static let probeTimeout: Duration = .seconds(20)
    /// The pause between two rounds over the nodes while none takes writes.
    static let searchPause: Duration = .milliseconds(250)

    /// Does nothing until ``start(within:)``.
    init(address: PostgresAddress, logger: Logger) {
        self.address = address
        self.logger = logger
    }

    /// Finds the node to write to (``writableNode(within:)``) and opens its pool.
    func start(within timeout: Duration) async throws {
        install(try await writableNode(within: timeout))
    }

    /// The node to write to: with one node, that node (whether it answers is for the first request to
    /// find); with several, the first that takes writes, else throws within `timeout`, saying what each
    /// node answered.
    func writableNode(within timeout: Duration) async throws -> PostgresAddress.Endpoint {
        if !address.followsPrimary { return address.endpoints[0] }
        let deadline = ContinuousClock.now + timeout
        var answers: [String] = []
        while ContinuousClock.now < deadline {
            let found = await findWritable()
            if let endpoint = found.endpoint { return endpoint }
            answers = found.answers
            try await Task.sleep(for: Self.searchPause)
        }
        throw SchemaError(
            description:
                "no node of the database takes writes (\(answers.joined(separator: "; "))); check the cluster (pg_autoctl show state)"
        )
    }

    /// The pool to use now.
    func current() throws -> Pool {
        guard let pool = state.withLock({ $0.pool }) else { throw PostgresAvailability.unreachable }
        return pool
    }

    /// A connection of `pool` closed, or a request on it found its node gone or read-only: looks for the
    /// node that takes writes (once, however many say so), and moves there if it is another. With one
    /// node there is nothing to look for: its pool reconnects.
    func lost(generation: Int) {
        guard address.followsPrimary else { return }
        state.withLock { state in
            guard !state.closed, state.searching == nil, let pool = state.pool, pool.generation == generation else {
                return
            }
            logger.info(
                "a connection to the database's primary failed; checking which node takes writes",
                metadata: ["node": "\(pool.endpoint)"])
            state.searching = Task { await self.search(from: pool) }
        }
    }

    private func search(from lost: Pool) async {
        let started = ContinuousClock.now
        while !Task.isCancelled {
            let found = await findWritable()
            if let endpoint = found.endpoint {
                let moved = endpoint != lost.endpoint
                if moved { install(endpoint) }
                state.withLock { $0.searching = nil }
                if moved {
                    let elapsed = (ContinuousClock.now - started).components
                    let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
                    logger.notice(
                        "writing to the database's new primary",
                        metadata: [
                            "node": "\(endpoint)", "was": "\(lost.endpoint)",
                            "after": "\(String(format: "%.1f", seconds)) s",
                        ])
                }
                return
            }
            try? await Task.sleep(for: Self.searchPause)
        }
    }

    /// Opens `endpoint`'s pool in place of the one before, which closes.
    private func install(_ endpoint: PostgresAddress.Endpoint) {
        let client = PostgresClient(configuration: address.clientConfiguration(endpoint), backgroundLogger: logger)
        let run = Task { await client.run() }
        let previous = state.withLock { state -> Pool? in
            let previous = state.pool
            state.generation += 1
            let generation = state.generation
            let watch = PostgresConnectionWatch { [weak self] in self?.lost(generation: generation) }
            state.pool = Pool(client: client, endpoint: endpoint, generation: generation, watch: watch, run: run)
            return previous
        }
        previous?.run.cancel()
    }

    /// Asks every node at once whether it takes writes; the first that says so (one that does not answer
    /// holds nobody up), or nil and what each answered.
    private func findWritable() async -> (endpoint: PostgresAddress.Endpoint?, answers: [String]) {
        await withTaskGroup(of: (Int, String?).self) { group in
            for (index, endpoint) in address.endpoints.enumerated() {
                group.addTask { (index, await self.refusal(endpoint)) }
            }
            var answers = [String](repeating: "no answer", count: address.endpoints.count)
            for await (index, refusal) in group {
                guard let refusal else {
                    group.cancelAll()
                    return (address.endpoints[index], [])
                }
                answers[index] = refusal
            }
            return (nil, zip(address.endpoints, answers).map { "\($0): \($1)" })
        }
    }

    /// Nil if `endpoint` takes writes now, else why not; within ``probeTimeout`` whatever the node does.
    /// The probe runs on its own: a connection whose start-up the node never answers need not end when
    /// asked to, and nobody waits for it past the timeout.
    private func refusal(_ endpoint: PostgresAddress.Endpoint) async -> String? {
        let answer = Outcome<String?>()
        let probe = Task {
            do {
                answer.finish(.success(try await self.probe(endpoint)))
            } catch {
                answer.finish(
                    .success(
                        PostgresAvailability.isUnavailable(error)
                            ? "unreachable" : "refused: \(String(reflecting: error))"))
            }
        }
        let timeout = Task {
            try await Task.sleep(for: Self.probeTimeout)
            answer.finish(.success("no answer within \(Self.probeTimeout.components.seconds) s"))
        }
        defer {
            probe.cancel()
            timeout.cancel()
        }
        do {
            return try await answer.value
        } catch {
            return "no answer"
        }
    }

    private func probe(_ endpoint: PostgresAddress.Endpoint) async throws -> String? {
        var configuration = try address.connectionConfiguration(endpoint)
        configuration.options.connectTimeout = .seconds(Self.probeTimeout.components.seconds)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        defer { Task { try? await connection.close() } }
        let rows = try await connection.query(
            "SELECT pg_is_in_recovery(), current_setting('transaction_read_only')", logger: logger
        ).collect()
        guard let row = rows.first else { return "no answer" }
        let (recovering, readOnly) = try row.decode((Bool, String).self)
        if recovering { return "a standby" }
        if readOnly == "on" { return "read-only (being promoted, or demoted)" }
        return nil
    }

    func close() {
        let (pool, searching) = state.withLock { state in
            state.closed = true
            return (state.pool, state.searching)
        }
        searching?.cancel()
        pool?.run.cancel()
    }
}
