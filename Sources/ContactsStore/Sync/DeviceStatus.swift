import Foundation

/// Where a device's sync stands, as one value an app shows: the scheduler's state, how the last send or fetch
/// ended, and the counts a person has to look at (conflict log entries, records refused as tampered with).
/// ``ContactsDevice/statusUpdates`` delivers it.
public struct DeviceStatus: Sendable, Equatable {
    /// How a send or fetch ended.
    public struct Outcome: Sendable, Equatable {
        /// When it ended.
        public var date: Date
        /// What went wrong, as the device logged it; nil when it succeeded.
        public var failure: String?

        public init(date: Date, failure: String? = nil) {
            self.date = date
            self.failure = failure
        }
    }

    /// The scheduler's latest status; nil when the device does not sync by itself.
    public var scheduler: SyncSchedule?
    /// How the last send or fetch ended, scheduled or manual; nil before the first.
    public var lastOutcome: Outcome?
    /// Entries in the conflict log (values a merge dropped).
    public var conflictCount = 0
    /// Records refused as tampered with, kept for inspection.
    public var tamperedCount = 0
    /// Accounts whose verified public key the server no longer gives, each as what to tell the person:
    /// nothing is shared with them or accepted from them until they verify again.
    public var refusedKeys: [String] = []
    /// Set when the server is older than this app needs (``ContactsDevice/serverRequirement``): what to tell the user.
    public var serverWarning: String?

    public init(
        scheduler: SyncSchedule? = nil, lastOutcome: Outcome? = nil, conflictCount: Int = 0,
        tamperedCount: Int = 0
    ) {
        self.scheduler = scheduler
        self.lastOutcome = lastOutcome
        self.conflictCount = conflictCount
        self.tamperedCount = tamperedCount
    }
}
