import Foundation
import SyncClient
import SyncCore
import Synchronization

extension SyncScheduler {
    /// Everything a status display shows about automatic sync.
    public struct Status: Sendable, Hashable {
        /// What the scheduler is doing or waiting for.
        public var decision: Decision
        /// When a send or fetch last succeeded, scheduled or manual.
        public var lastSuccess: Date?
        /// Which work succeeded at ``lastSuccess``, so that a display can say "send done" once per send.
        public var lastSuccessWork: Work?
        /// The last send or fetch that failed, scheduled or manual; kept after later successes.
        public var lastFailure: Failure?
        /// Whether the push socket is connected, as last reported.
        public var pushConnected: Bool
        /// How many sends and fetches have failed since the last success.
        public var consecutiveFailures: Int

        /// Creates a status.
        public init(
            decision: Decision, lastSuccess: Date? = nil, lastFailure: Failure? = nil, pushConnected: Bool = false,
            consecutiveFailures: Int = 0, lastSuccessWork: Work? = nil
        ) {
            self.decision = decision
            self.lastSuccess = lastSuccess
            self.lastSuccessWork = lastSuccessWork
            self.lastFailure = lastFailure
            self.pushConnected = pushConnected
            self.consecutiveFailures = consecutiveFailures
        }
    }

    /// A send or fetch that failed.
    public struct Failure: Sendable, Hashable {
        /// When it failed.
        public var date: Date
        /// Which work failed.
        public var work: Work
        /// The error's code, when it was a ``SyncError``.
        public var code: SyncError.Code?
        /// The error, for a person.
        public var message: String
        /// The error's reason, when the server gave one (a session ended elsewhere, say).
        public var reason: SyncError.Reason?
        /// With `quotaExceeded`: the account's storage and its limit.
        public var quota: StorageUsage?

        /// Creates a failure record.
        public init(date: Date, work: Work, code: SyncError.Code?, message: String) {
            self.date = date
            self.work = work
            self.code = code
            self.message = message
        }

        /// Records `error` as a failure of `work` at `date`.
        init(date: Date, work: Work, error: any Error) {
            let syncError = error as? SyncError
            self.init(date: date, work: work, code: syncError?.code, message: "\(error)")
            reason = syncError?.reason
            quota = syncError?.quota
        }
    }
}

/// Hands every status change to each subscriber, the current status first.
///
/// A class with a lock rather than actor state, so that `statusUpdates` can subscribe without
/// `await` and no change slips between reading the current status and subscribing.
final class StatusBroadcast: Sendable {
    private struct State {
        var current: SyncScheduler.Status
        var nextID = 0
        var subscribers: [Int: AsyncStream<SyncScheduler.Status>.Continuation] = [:]
    }

    private let state: Mutex<State>

    init(_ initial: SyncScheduler.Status) {
        state = Mutex(State(current: initial))
    }

    deinit {
        let subscribers = state.withLock { $0.subscribers.values }
        for subscriber in subscribers { subscriber.finish() }
    }

    var current: SyncScheduler.Status {
        state.withLock { $0.current }
    }

    /// Publishes `status` unless it equals the current one.
    func publish(_ status: SyncScheduler.Status) {
        // Yielding under the lock keeps every subscriber's order the publishing order.
        state.withLock { state in
            guard status != state.current else { return }
            state.current = status
            for subscriber in state.subscribers.values { subscriber.yield(status) }
        }
    }

    /// A new stream of statuses that starts with the current one. A slow reader misses the oldest
    /// of more than 64 unread statuses, never the latest.
    func subscribe() -> AsyncStream<SyncScheduler.Status> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: SyncScheduler.Status.self, bufferingPolicy: .bufferingNewest(64))
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        state.withLock { state in
            state.subscribers[id] = continuation
            continuation.yield(state.current)
        }
        return stream
    }
}
