extension SyncScheduler {
    /// How long the scheduler waits, and for what. ``standard`` suits an interactive app.
    public struct Policy: Sendable, Hashable {
        /// A local change waits this long for more changes, so that a burst of edits goes out as one send.
        public var debounce: Duration
        /// Under continuous editing, no change waits longer than this for its send.
        public var maximumDelay: Duration
        /// While the push socket is down, fetch this often, as pushes may be missed
        /// (never more often than every 0.1 s).
        public var pollInterval: Duration
        /// The backoff window after the first transient failure; it doubles with each further one.
        public var backoffBase: Duration
        /// The largest backoff window.
        public var backoffCap: Duration
        /// The longest that work is held while on battery and low, before it runs anyway:
        /// local changes must reach the server eventually, as the device may die.
        public var lowPowerMaximumDeferral: Duration
        /// The longest that work is held for high load or another condition, before it runs anyway.
        public var conditionMaximumDeferral: Duration
        /// How long a probe's answer holds: while work is deferred, probes are read again this often,
        /// and deferred work runs at the first reading that allows it (never more often than every 0.1 s).
        public var conditionRecheck: Duration

        /// Creates a policy; every value defaults to that of ``standard``.
        public init(
            debounce: Duration = .milliseconds(500),
            maximumDelay: Duration = .seconds(5),
            pollInterval: Duration = .seconds(30),
            backoffBase: Duration = .seconds(1),
            backoffCap: Duration = .seconds(300),
            lowPowerMaximumDeferral: Duration = .seconds(300),
            conditionMaximumDeferral: Duration = .seconds(60),
            conditionRecheck: Duration = .seconds(10)
        ) {
            self.debounce = debounce
            self.maximumDelay = maximumDelay
            self.pollInterval = pollInterval
            self.backoffBase = backoffBase
            self.backoffCap = backoffCap
            self.lowPowerMaximumDeferral = lowPowerMaximumDeferral
            self.conditionMaximumDeferral = conditionMaximumDeferral
            self.conditionRecheck = conditionRecheck
        }

        /// Debounce 0.5 s, at most 5 s; poll every 30 s while push is down; back off from 1 s up to
        /// 5 min; hold work at most 5 min on low battery and 1 min under load, rechecking every 10 s.
        public static let standard = Policy()

        /// The backoff window for the `failures`-th consecutive transient failure (counted from 1):
        /// `min(backoffCap, backoffBase · 2^(failures − 1))`. A retry waits a random part of it.
        public func backoffWindow(afterFailures failures: Int) -> Duration {
            let doublings = max(0, min(failures - 1, 62))
            let window = backoffBase.inSeconds * Double(UInt64(1) << UInt64(doublings))
            return min(backoffCap, .seconds(window))
        }

        /// How long work may be held for `reason` before it runs regardless.
        func maximumDeferral(for reason: DeferralReason) -> Duration {
            if case .onBattery = reason { lowPowerMaximumDeferral } else { conditionMaximumDeferral }
        }
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
