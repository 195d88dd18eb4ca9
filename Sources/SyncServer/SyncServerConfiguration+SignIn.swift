import Foundation

extension SyncServerConfiguration {
    /// How failed sign-ins slow down the next attempts for one key: a username, or a client address.
    ///
    /// The first `freeFailures` failures cost nothing. Each failure after them makes the key wait
    /// before its next attempt: `initialDelay`, doubled with every further failure, up to
    /// `maximumDelay`. An attempt while the key waits answers `429 requestRateLimited` with
    /// `retryAfter` and is not checked (so it costs no password hash and counts for nothing).
    /// A key is forgotten `forgetAfter` after its last failure.
    public struct FailureThrottle: Sendable, Hashable {
        public var freeFailures: Int
        public var initialDelay: Duration
        public var maximumDelay: Duration
        public var forgetAfter: Duration

        public init(freeFailures: Int, initialDelay: Duration, maximumDelay: Duration, forgetAfter: Duration) {
            self.freeFailures = freeFailures
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
            self.forgetAfter = forgetAfter
        }

        /// The wait after `failures` failures, or nil while they are free.
        func delay(afterFailures failures: Int) -> Duration? {
            let beyond = failures - freeFailures
            guard beyond > 0 else { return nil }
            // 2^(beyond-1) without overflow: past 62 doublings any delay is the maximum anyway.
            let factor = beyond > 62 ? Double.infinity : Double(UInt64(1) << UInt64(beyond - 1))
            let seconds = initialDelay.seconds * factor
            return seconds >= maximumDelay.seconds ? maximumDelay : .seconds(seconds)
        }
    }

    /// How much password hashing (bcrypt, deliberately slow) may run at once.
    ///
    /// At most `concurrency` hashes run at the same time, so sign-ins and sign-ups cannot take every
    /// core from signed-in users; up to `queueLimit` more wait their turn, and beyond that a request
    /// answers `503 serviceUnavailable` with `retryAfter`.
    public struct PasswordHashing: Sendable, Hashable {
        public var concurrency: Int
        public var queueLimit: Int

        public init(concurrency: Int, queueLimit: Int) {
            self.concurrency = concurrency
            self.queueLimit = queueLimit
        }

        /// Half the cores (at least one) hash; 32 may wait.
        public static var `default`: PasswordHashing {
            PasswordHashing(concurrency: max(1, ProcessInfo.processInfo.activeProcessorCount / 2), queueLimit: 32)
        }
    }
}
