import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation

/// What the status pane shows: gathered from the scheduler's statuses, the device's store and the app's own
/// manual syncs, and reduced to one of idle, syncing or error.
public struct SyncStatus: Sendable, Equatable {
    /// The one-word state at the top of the pane.
    public enum Phase: Sendable, Equatable {
        case idle
        /// A send or fetch runs now, scheduled or manual.
        case syncing(SyncWork)
        /// The last attempt failed, and nothing has succeeded since; the error's message.
        case error(String)
    }

    /// A failure the scheduler did not see (the app could not reach the server when it started).
    public struct Failure: Sendable, Equatable {
        public var date: Date
        public var message: String

        public init(date: Date, message: String) {
            self.date = date
            self.message = message
        }
    }

    /// The scheduler's latest status; nil when the engine does not sync automatically.
    public var scheduler: SyncSchedule?
    /// A manual back up (send) or refresh (fetch) started from the keyboard and still running.
    public var manualRun: SyncWork?
    /// The last manual sync that failed, if none succeeded after it.
    public var manualFailure: Failure?
    /// Why the app opened without a server, until a sync succeeds with an account.
    public var startupProblem: Failure?
    /// Changes saved on this device that the server has not confirmed.
    public var pendingChanges = 0
    /// Changes received so far by the fetch that is running.
    public var fetchedSoFar = 0
    /// The last sync that succeeded, as the store recorded it (manual syncs, including earlier sessions).
    public var storedLastSync: Date?
    /// The signed-in user's name; nil when not signed in.
    public var account: String?
    /// The server's address.
    public var server: String?
    /// When the push socket last connected again after it had dropped (the server came back).
    public var reconnectedAt: Date?

    public init() {}

    /// Whether the server no longer takes this device's session (ended on another device, expired, the
    /// account deleted or disabled), as the last failure says while nothing has succeeded since.
    public var isSignedOutByServer: Bool {
        scheduler?.serverEndedSession ?? false
    }

    /// A server URL as a person reads it: a Unix socket's path rather than its percent-encoded URL.
    public static func serverName(_ url: String) -> String {
        guard url.hasPrefix(unixSocketPrefix) else { return url }
        return "socket " + (url.dropFirst(unixSocketPrefix.count).removingPercentEncoding ?? url)
    }

    /// How the URL of a server on a Unix socket (the local one) begins.
    private static let unixSocketPrefix = "http+unix://"

    /// The command that signs device `device` in to `server`, as it must be typed: a server other than the
    /// local one and a device other than the default are named, since a command without them opens another.
    public static func signInCommand(server: String?, device: String) -> String {
        var words = ["contacts"]
        if let server, !server.hasPrefix(unixSocketPrefix) { words += ["--server", server] }
        if device != DataDirectory.defaultDevice { words += ["--device", device] }
        return (words + ["account", "signin"]).joined(separator: " ")
    }

    /// Whether the push socket is open, so that other devices' changes arrive at once.
    public var pushConnected: Bool { scheduler?.pushConnected ?? false }

    /// When a sync last succeeded, from whichever source knows the latest.
    public var lastSuccess: Date? {
        [scheduler?.lastSuccess, storedLastSync].compactMap { $0 }.max()
    }

    /// Idle, syncing or error, with the error's message.
    public var phase: Phase {
        if let manualRun { return .syncing(manualRun) }
        if let work = scheduler?.running { return .syncing(work) }
        if let failure = currentFailure { return .error(failure) }
        return .idle
    }

    /// The message of the failure that nothing has made good yet.
    private var currentFailure: String? {
        if let failure = scheduler?.unresolvedFailure { return failure }
        let success = lastSuccess ?? .distantPast
        if let manualFailure, manualFailure.date > success { return manualFailure.message }
        // Signed out, the engine "succeeds" at doing nothing: only a success with an account ends the problem.
        if let startupProblem, account == nil || (startupProblem.date > success && scheduler?.lastSuccess == nil) {
            return startupProblem.message
        }
        return nil
    }

    /// When the scheduler's latest status arrived, so that "retry in 8 s" counts down between statuses.
    public var schedulerStatusDate: Date?

    /// What the scheduler decided, for a person, as of `now`: "sending in 0.4 s (debounce)", "deferred:
    /// offline — retry in 8 s (attempt 3)".
    public func decision(at now: Date) -> String {
        guard let scheduler else { return "automatic sync is off" }
        let elapsed = Duration.milliseconds(Int(max(0, now.timeIntervalSince(schedulerStatusDate ?? now)) * 1000))
        return scheduler.decision(after: elapsed)
    }
}
