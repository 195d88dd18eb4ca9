import PostgresNIO
import SyncCore
import Synchronization
import _ConnectionPoolModule

/// Tells a database that cannot be reached from a request that went wrong. A client told
/// `serviceUnavailable` with `retryAfter` waits and tries again, as CKSyncEngine does; a bare
/// `internalError` would look like a bug.
enum PostgresAvailability {
    /// Seconds a client waits before it retries while the database cannot be reached.
    static let retryAfter: Double = 2

    /// What a request is told while the database cannot be reached.
    static var unreachable: SyncError {
        SyncError(
            .serviceUnavailable, "the server's database cannot be reached right now; try again shortly",
            retryAfter: retryAfter)
    }

    /// Runs `work`, turning a lost or refused database connection into `serviceUnavailable`.
    static func checked<Result>(_ work: () async throws -> Result) async throws -> Result {
        do {
            return try await work()
        } catch let error where isUnavailable(error) {
            throw unreachable
        }
    }

    /// Runs `work`, which calls `leased` once it holds a connection; fails with `serviceUnavailable` when
    /// that has not happened within `timeout`. Only the wait for a connection is limited: once it holds
    /// one, `work` runs to its end.
    static func leasing<Result: Sendable>(
        within timeout: Duration,
        _ work: @escaping @Sendable (_ leased: @escaping @Sendable () -> Void) async throws -> Result
    ) async throws -> Result {
        let state = LeaseState()
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                do {
                    return try await work { state.leased.withLock { $0 = true } }
                } catch let error where !state.leased.withLock({ $0 }) && !(error is SyncError) {
                    // Whatever stopped it from getting a connection (refused, no such database, a
                    // password the server no longer takes) is the database being unavailable.
                    throw unreachable
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                if !state.leased.withLock({ $0 }) {
                    throw SyncError(
                        .serviceUnavailable,
                        "the server's database did not answer within \(timeout.components.seconds) s; try again shortly",
                        retryAfter: retryAfter)
                }
                return nil
            }
            while let next = try await group.next() {
                if let result = next {
                    group.cancelAll()
                    return result
                }
            }
            throw CancellationError()
        }
    }

    private final class LeaseState: Sendable {
        let leased = Mutex(false)
    }

    /// Whether `error` says the database could not be reached (rather than refused a query).
    static func isUnavailable(_ error: any Error) -> Bool {
        if error is ConnectionPoolError { return true }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
            .sslUnsupported, .failedToAddSSLHandler:
            return true
        default:
            // Class 08: connection exceptions; 57P01–57P03: the server shuts down or is starting; 25006: a
            // write on a node that no longer takes them (a primary demoted by a failover or a switchover).
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || state.hasPrefix("57P") || state == "25006"
        }
    }
}
