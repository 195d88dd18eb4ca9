import Foundation

/// When sessions end: ``SyncServerConfiguration/sessionLifetime`` after their last request.
///
/// The end slides: a request moves it. So that requests do not each cost a write, the last use is
/// stored again only once it is ``touchInterval`` old, which lets a session end up to that much
/// early.
struct SessionLifetime: Sendable {
    let lifetime: Duration
    let clock: ServerClock

    /// An hour, or a twentieth of the lifetime when that is shorter.
    var touchInterval: TimeInterval { min(3600, lifetime.seconds / 20) }

    /// When `session` ends unless it is used before.
    func end(of session: StoredSession) -> Date {
        session.lastUsedAt.addingTimeInterval(lifetime.seconds)
    }

    func hasEnded(_ session: StoredSession, at now: Date) -> Bool {
        now >= end(of: session)
    }

    /// Whether a request at `now` should store it as the session's last use.
    func needsTouch(_ session: StoredSession, at now: Date) -> Bool {
        now.timeIntervalSince(session.lastUsedAt) >= touchInterval
    }

    /// The lifetime in words, for messages: "90 days", "2 hours", "30 seconds".
    var description: String {
        let seconds = lifetime.seconds
        for (unit, length) in [("day", 86_400.0), ("hour", 3_600.0), ("minute", 60.0)] where seconds >= length {
            let count = Int((seconds / length).rounded())
            return "\(count) \(unit)\(count == 1 ? "" : "s")"
        }
        let count = Int(seconds.rounded())
        return "\(count) second\(count == 1 ? "" : "s")"
    }
}
