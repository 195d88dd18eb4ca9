import Foundation
import Synchronization

/// Token buckets by key (a user or an address).
///
/// A request takes one token; tokens refill at a steady rate up to the burst size. When the
/// bucket is empty the caller learns how long until the next token. Time is the server clock's, so
/// that a test refills a bucket by moving its clock rather than by waiting.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Duration
    }

    private let limit: SyncServerConfiguration.RateLimit
    private let clock: ServerClock
    private let buckets = Mutex<[String: Bucket]>([:])

    init(_ limit: SyncServerConfiguration.RateLimit, clock: ServerClock = .system) {
        self.limit = limit
        self.clock = clock
    }

    /// Takes a token for `key`. Returns `nil` when allowed, or the seconds to wait.
    func acquire(_ key: String) -> Double? {
        let now = clock.elapsed()
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: limit.burst, updated: now)
            let elapsed = (now - bucket.updated).seconds
            bucket.tokens = min(limit.burst, bucket.tokens + elapsed * limit.requestsPerSecond)
            bucket.updated = now
            defer {
                buckets[key] = bucket
                if buckets.count > 10_000 { Self.forgetIdle(&buckets, now: now, limit: limit) }
            }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return (1 - bucket.tokens) / limit.requestsPerSecond
        }
    }

    /// Drops buckets that would be full again: they carry no information.
    private static func forgetIdle(
        _ buckets: inout [String: Bucket], now: Duration, limit: SyncServerConfiguration.RateLimit
    ) {
        buckets = buckets.filter { _, bucket in
            bucket.tokens + (now - bucket.updated).seconds * limit.requestsPerSecond < limit.burst
        }
    }
}
