import NIOCore
import PostgresNIO
import Synchronization

/// Ends the work on a connection that closes under it.
///
/// postgres-nio hands a query to its connection's channel without a write promise. On a channel that
/// has closed and torn down its pipeline, the write fails at the channel's head, and the query's own
/// promise is never completed: its caller waits forever. That happens when PostgreSQL restarts (or
/// ends a backend) between two queries of one request. Queries in flight when it closes fail by
/// themselves; so once a connection has closed, the work still running on it gets a moment to end on
/// its own, then is answered `serviceUnavailable` and left behind (it holds nothing the pool needs: the
/// pool drops a closed connection).
///
/// One close callback per connection, however many leases it serves: a callback per lease would pile up
/// on a long-lived connection's close future.
final class PostgresConnectionWatch: Sendable {
    /// How long work on a closed connection may still end by itself.
    static let grace: TimeAmount = .seconds(1)

    private struct State {
        var nextKey = 0
        /// Per connection, the work running on it: how to end each.
        var running: [PostgresConnection.ID: [Int: @Sendable () -> Void]] = [:]
    }

    private let state = Mutex(State())
    /// Told when a connection closes (its pool's node may be gone).
    private let onClose: @Sendable () -> Void

    init(onClose: @escaping @Sendable () -> Void = {}) {
        self.onClose = onClose
    }

    /// Runs `work` on `connection`; if the connection closes before `work` ends, fails with
    /// `serviceUnavailable` after ``grace`` unless `work` has ended by then.
    func run<Result: Sendable>(
        on connection: PostgresConnection, _ work: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let outcome = Outcome<Result>()
        let (key, isFirst) = state.withLock { state in
            let key = state.nextKey
            state.nextKey += 1
            let isFirst = state.running[connection.id] == nil
            state.running[connection.id, default: [:]][key] = {
                outcome.finish(.failure(PostgresAvailability.unreachable))
            }
            return (key, isFirst)
        }
        defer { state.withLock { _ = $0.running[connection.id]?.removeValue(forKey: key) } }
        if isFirst {
            let id = connection.id
            let eventLoop = connection.eventLoop
            connection.closeFuture.whenComplete { _ in
                self.onClose()
                eventLoop.scheduleTask(in: Self.grace) { self.closed(id) }
            }
        }
        let task = Task {
            do {
                outcome.finish(.success(try await work()))
            } catch {
                outcome.finish(.failure(error))
            }
        }
        return try await withTaskCancellationHandler {
            try await outcome.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Ends what still runs on a connection that closed.
    private func closed(_ id: PostgresConnection.ID) {
        let ends = state.withLock { $0.running.removeValue(forKey: id) ?? [:] }
        for end in ends.values { end() }
    }
}

/// A result that arrives once, from whichever comes first, to a waiter that may come before or after it.
final class Outcome<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, any Error>?
        var waiter: CheckedContinuation<Value, any Error>?
    }

    private let state = Mutex(State())

    func finish(_ result: Result<Value, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    var value: Value {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let result = state.withLock { state -> Result<Value, any Error>? in
                    if state.result == nil { state.waiter = continuation }
                    return state.result
                }
                if let result { continuation.resume(with: result) }
            }
        }
    }
}
