import Foundation
import SyncClient
import SyncCore

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
