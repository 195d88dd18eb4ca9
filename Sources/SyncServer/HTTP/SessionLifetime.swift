import Foundation

/// When sessions end: ``SyncServerConfiguration/sessionLifetime`` after their last request, and
/// at the latest ``SyncServerConfiguration/sessionMaxLifetime`` after they began, used or not.
///
/// The sliding end moves with each request. So that requests do not each cost a write, the last
/// use is stored again only once it is ``touchInterval`` old, which lets a session end up to that
/// much early. The absolute end never moves: a stolen token that is used every day still dies.
struct SessionLifetime: Sendable {
    let lifetime: Duration
    let clock: ServerClock
    var maximumLifetime: Duration = .seconds(365 * 24 * 3600)

    /// An hour, or a twentieth of the lifetime when that is shorter.
    var touchInterval: TimeInterval { min(3600, lifetime.seconds / 20) }

    /// When `session` ends unless it is used before (and at the latest, whatever the use).
    func end(of session: StoredSession) -> Date {
        min(slidingEnd(of: session), absoluteEnd(of: session))
    }

    private func slidingEnd(of session: StoredSession) -> Date {
        session.lastUsedAt.addingTimeInterval(lifetime.seconds)
    }

    private func absoluteEnd(of session: StoredSession) -> Date {
        session.createdAt.addingTimeInterval(maximumLifetime.seconds)
    }

    func hasEnded(_ session: StoredSession, at now: Date) -> Bool {
        now >= end(of: session)
    }

    /// Why `session` ended, in words for the refusal: "… without use" or "… after it began".
    func whyEnded(_ session: StoredSession) -> String {
        absoluteEnd(of: session) <= slidingEnd(of: session)
            ? "sessions last at most \(Self.words(maximumLifetime)) after sign-in"
            : "it went unused for \(description)"
    }

    /// Whether a request at `now` should store it as the session's last use.
    func needsTouch(_ session: StoredSession, at now: Date) -> Bool {
        now.timeIntervalSince(session.lastUsedAt) >= touchInterval
    }

    /// The lifetime in words, for messages: "90 days", "2 hours", "30 seconds".
    var description: String { Self.words(lifetime) }

    private static func words(_ duration: Duration) -> String {
        let seconds = duration.seconds
        for (unit, length) in [("day", 86_400.0), ("hour", 3_600.0), ("minute", 60.0)] where seconds >= length {
            let count = Int((seconds / length).rounded())
            return "\(count) \(unit)\(count == 1 ? "" : "s")"
        }
        let count = Int(seconds.rounded())
        return "\(count) second\(count == 1 ? "" : "s")"
    }
}
