import Foundation

extension SyncScheduler {
    /// What the scheduler is doing or waiting for, as the status pane and `contacts status` show it.
    ///
    /// Its ``description`` is the sentence to show: "idle", "sending in 0.4 s (debounce)",
    /// "fetching (push)", "deferred: offline — retry in 8 s (attempt 3)", "deferred: on battery 12 %",
    /// "rate limited until 12:03:04".
    public enum Decision: Sendable, Hashable, CustomStringConvertible {
        /// Not started, or stopped: nothing runs automatically.
        case stopped
        /// Nothing to do until something happens.
        case idle
        /// `work` runs in `delay` (from when the decision was made), for `trigger`.
        case waiting(Work, in: Duration, trigger: Trigger)
        /// `work` is running now, for `trigger`.
        case running(Work, trigger: Trigger)
        /// Due work is held for `reason`; after a failure, `retryIn` says when it runs again.
        case deferred(DeferralReason, retryIn: Duration?)

        public var description: String {
            switch self {
            case .stopped:
                return "stopped"
            case .idle:
                return "idle"
            case .waiting(let work, let delay, let trigger):
                let why = trigger == .localChanges ? "debounce" : trigger.description
                return "\(work.progressive) in \(Self.format(delay)) (\(why))"
            case .running(let work, let trigger):
                return "\(work.progressive) (\(trigger))"
            case .deferred(let reason, let retryIn):
                // The time of day says it all; a countdown beside it would only disagree.
                if case .rateLimited = reason { return reason.description }
                var text = "deferred: \(reason)"
                if let retryIn { text += " — retry in \(Self.format(retryIn))" }
                if let attempt = reason.attempt, attempt > 0 { text += " (attempt \(attempt))" }
                return text
            }
        }

        /// "0.4 s" under ten seconds, "8 s" under a minute, then "5 min" or "2 min 30 s".
        static func format(_ duration: Duration) -> String {
            let seconds = max(0, duration.inSeconds)
            if seconds < 9.95 {
                let tenths = (seconds * 10).rounded()
                return tenths.truncatingRemainder(dividingBy: 10) == 0
                    ? "\(Int(tenths / 10)) s" : String(format: "%.1f s", tenths / 10)
            }
            let whole = Int(seconds.rounded())
            if whole < 60 { return "\(whole) s" }
            return whole % 60 == 0 ? "\(whole / 60) min" : "\(whole / 60) min \(whole % 60) s"
        }
    }

    /// Why due work does not run yet.
    ///
    /// The scheduler itself derives the first four from failures; ``ConditionProbe``s report the others.
    public enum DeferralReason: Sendable, Hashable, CustomStringConvertible {
        /// The server could not be reached; `attempt` consecutive attempts have failed.
        case offline(attempt: Int)
        /// The server is overloaded or the zone busy; `attempt` consecutive attempts have failed.
        case serverBusy(attempt: Int)
        /// The server asked the client to slow down, until the wall-clock time `until`.
        case rateLimited(until: Date)
        /// Not signed in, or the account is unavailable; `attempt` consecutive attempts have failed.
        case accountUnavailable(attempt: Int)
        /// Running on battery, with `percent` % left, below the threshold.
        case onBattery(percent: Int)
        /// The system's load average per processor core is `perCore`, above the threshold.
        case highLoad(perCore: Double)
        /// Another condition, described for a person.
        case other(String)

        /// How many consecutive attempts have failed, for the deferrals that follow a failure.
        public var attempt: Int? {
            switch self {
            case .offline(let attempt), .serverBusy(let attempt), .accountUnavailable(let attempt): attempt
            case .rateLimited, .onBattery, .highLoad, .other: nil
            }
        }

        public var description: String {
            switch self {
            case .offline: "offline"
            case .serverBusy: "server busy"
            case .rateLimited(let until): "rate limited until \(Self.timeOfDay(until))"
            case .accountUnavailable: "account unavailable"
            case .onBattery(let percent): "on battery \(percent) %"
            case .highLoad(let perCore): "high load (\(String(format: "%.2f", perCore)) per core)"
            case .other(let text): text
            }
        }

        /// "12:03:04", in the user's time zone.
        private static func timeOfDay(_ date: Date) -> String {
            let parts = Calendar.current.dateComponents([.hour, .minute, .second], from: date)
            return String(format: "%02d:%02d:%02d", parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
        }
    }
}

extension SyncScheduler.Work {
    /// "sending" or "fetching".
    fileprivate var progressive: String {
        switch self {
        case .send: "sending"
        case .fetch: "fetching"
        }
    }
}
