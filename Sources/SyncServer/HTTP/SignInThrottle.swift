import Crypto
import Foundation
import Synchronization

/// Counts failed sign-ins per username and per client address, and says how long the next attempt
/// must wait (see ``SyncServerConfiguration/FailureThrottle``).
///
/// Memory is bounded: each key space holds at most ``maximumKeys`` keys. Past that, keys whose
/// failures are forgotten go first, then the keys whose last failure is oldest.
final class SignInThrottle: Sendable {
    static let maximumKeys = 100_000

    private let clock: ServerClock
    private let usernames: FailureCounts
    private let addresses: FailureCounts

    init(
        usernames: SyncServerConfiguration.FailureThrottle, addresses: SyncServerConfiguration.FailureThrottle,
        clock: ServerClock
    ) {
        self.clock = clock
        self.usernames = FailureCounts(policy: usernames)
        self.addresses = FailureCounts(policy: addresses)
    }

    /// The seconds an attempt for `username` from `address` must wait, or nil if it may go ahead.
    func wait(username: String, address: String) -> Double? {
        let now = clock.elapsed()
        let waits = [usernames.wait(Self.key(username), now: now), addresses.wait(address, now: now)]
        return waits.compactMap { $0 }.max()?.seconds
    }

    /// Counts a wrong password (or an unknown username: the two must look alike).
    func recordFailure(username: String, address: String) {
        let now = clock.elapsed()
        usernames.fail(Self.key(username), now: now)
        addresses.fail(address, now: now)
    }

    /// Clears the username's failures. The address keeps its own: a client with one account of its
    /// own must not be able to wipe its count between guesses at other accounts.
    func recordSuccess(username: String) {
        usernames.clear(Self.key(username))
    }

    /// Usernames compare case-insensitively; a digest keeps a megabyte of "username" from costing
    /// a megabyte of memory.
    private static func key(_ username: String) -> String {
        Data(SHA256.hash(data: Data(username.lowercased().utf8))).base64EncodedString()
    }
}

/// One key space of ``SignInThrottle``.
private final class FailureCounts: Sendable {
    private struct Entry {
        var failures: Int
        var lastFailure: Duration
        var blockedUntil: Duration
    }

    private let policy: SyncServerConfiguration.FailureThrottle
    private let entries = Mutex<[String: Entry]>([:])

    init(policy: SyncServerConfiguration.FailureThrottle) {
        self.policy = policy
    }

    func wait(_ key: String, now: Duration) -> Duration? {
        entries.withLock { entries in
            guard let entry = entries[key], entry.blockedUntil > now else { return nil }
            return entry.blockedUntil - now
        }
    }

    func fail(_ key: String, now: Duration) {
        entries.withLock { entries in
            var entry = entries[key] ?? Entry(failures: 0, lastFailure: now, blockedUntil: now)
            if now - entry.lastFailure >= policy.forgetAfter {
                entry = Entry(failures: 0, lastFailure: now, blockedUntil: now)
            }
            // Saturates: past a few dozen failures the wait is the maximum anyway.
            entry.failures = min(entry.failures + 1, 1_000)
            entry.lastFailure = now
            if let delay = policy.delay(afterFailures: entry.failures) {
                entry.blockedUntil = now + delay
            }
            entries[key] = entry
            if entries.count > SignInThrottle.maximumKeys { prune(&entries, now: now) }
        }
    }

    func clear(_ key: String) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    /// Forgets what may be forgotten, then the oldest half, so that pruning stays rare.
    private func prune(_ entries: inout [String: Entry], now: Duration) {
        entries = entries.filter { now - $0.value.lastFailure < policy.forgetAfter }
        guard entries.count > SignInThrottle.maximumKeys / 2 else { return }
        let kept = entries.sorted { $0.value.lastFailure > $1.value.lastFailure }.prefix(SignInThrottle.maximumKeys / 2)
        entries = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
    }
}
