import Foundation
import SyncKit

/// A send (the person's changes to the server) or a fetch (the server's changes to the device).
public enum SyncWork: String, Sendable, Hashable {
    case send
    case fetch

    init(_ work: SyncScheduler.Work) {
        switch work {
        case .send: self = .send
        case .fetch: self = .fetch
        }
    }
}

/// What automatic sync is doing, as a device's status shows it (``DeviceStatus/scheduler``): the
/// scheduler's latest status, read through what a display needs, so that an app needs nothing of the
/// engine's own types.
public struct SyncSchedule: Sendable, Equatable {
    package var status: SyncScheduler.Status

    package init(_ status: SyncScheduler.Status) {
        self.status = status
    }

    /// Whether the push socket is connected, so that other devices' changes arrive at once.
    public var pushConnected: Bool { status.pushConnected }
    /// When a send or fetch last succeeded, scheduled or manual.
    public var lastSuccess: Date? { status.lastSuccess }
    /// The send or fetch that runs now.
    public var running: SyncWork? {
        if case .running(let work, _) = status.decision { return SyncWork(work) }
        return nil
    }

    /// The last failure's message for a person, while nothing has succeeded since.
    public var unresolvedFailure: String? {
        guard status.consecutiveFailures > 0, let failure = status.lastFailure else { return nil }
        return SyncProblem.describe(
            code: failure.code, reason: failure.reason, quota: failure.quota, message: failure.message)
    }

    /// Whether the server no longer takes this device's session (ended on another device, expired, the
    /// account deleted or disabled), as the last failure says while nothing has succeeded since.
    public var serverEndedSession: Bool {
        guard status.consecutiveFailures > 0 else { return false }
        return status.lastFailure?.reason?.endsSession ?? false
    }

    /// What the scheduler decided, for a person, `elapsed` after it said so: "sending in 0.4 s
    /// (debounce)", "deferred: offline — retry in 8 s (attempt 3)"; the waits count down.
    public func decision(after elapsed: Duration) -> String {
        switch status.decision {
        case .waiting(let work, let delay, let trigger):
            return SyncScheduler.Decision.waiting(work, in: max(.zero, delay - elapsed), trigger: trigger).description
        case .deferred(let reason, .some(let retryIn)):
            return SyncScheduler.Decision.deferred(reason, retryIn: max(.zero, retryIn - elapsed)).description
        default:
            return status.decision.description
        }
    }
}
