import Foundation
import SyncCore

/// How a sync server behaves: its limits, rate limit, password hashing cost and history retention.
public struct SyncServerConfiguration: Sendable {
    /// A token bucket: `requestsPerSecond` refill, up to `burst` requests at once.
    public struct RateLimit: Sendable, Hashable {
        public var requestsPerSecond: Double
        public var burst: Double

        public init(requestsPerSecond: Double, burst: Double) {
            self.requestsPerSecond = requestsPerSecond
            self.burst = burst
        }
    }

    /// The limits advertised at `GET /v1/limits` and enforced.
    public var limits: ServerLimits
    /// The version `GET /v1/health` reports: this release's. Tests set an older one to see what
    /// clients make of an older server.
    public var version = SyncRelease.version
    /// Per signed-in user, on every authenticated route.
    public var userRateLimit: RateLimit
    /// Per client address, on account creation and sign-in (slows down password guessing).
    public var addressRateLimit: RateLimit
    /// bcrypt's cost factor: 2^cost rounds. 12 takes about a quarter of a second.
    public var bcryptCost: UInt8
    /// The costs bcrypt takes.
    public static let bcryptCosts: ClosedRange<UInt8> = 4...31
    /// How long tombstones (deleted records and zones) are kept. Change tokens older than that
    /// get `changeTokenExpired` and clients fetch from scratch.
    public var tombstoneRetention: Duration
    /// How long a modify answer is kept for replays of its `clientRequestID`.
    public var requestReplayRetention: Duration
    /// How often history is compacted.
    public var compactionInterval: Duration
    /// Failed sign-ins per username (known or not, compared case-insensitively): 5 free, then 1 s
    /// doubling to 15 min; a successful sign-in clears them.
    public var usernameSignInThrottle = FailureThrottle(
        freeFailures: 5, initialDelay: .seconds(1), maximumDelay: .seconds(15 * 60), forgetAfter: .seconds(24 * 3600))
    /// Failed sign-ins per client address (the connection's, never a header a client can forge): 20
    /// free, then 1 s doubling to 15 min. A success does not clear them, or one account of its own
    /// would let a client guess other users' passwords freely.
    public var addressSignInThrottle = FailureThrottle(
        freeFailures: 20, initialDelay: .seconds(1), maximumDelay: .seconds(15 * 60), forgetAfter: .seconds(24 * 3600))
    /// Account creations per client address, on top of ``addressRateLimit``.
    public var accountCreationRateLimit = RateLimit(requestsPerSecond: 1.0 / 60, burst: 10)
    /// How many bcrypt hashes run at once and how many may wait.
    public var passwordHashing = PasswordHashing.default
    /// A session ends this long after its last request (each request moves the end, to within an
    /// hour); then its token answers `notAuthenticated` and its push sockets close.
    public var sessionLifetime: Duration = .seconds(90 * 24 * 3600)
    /// A session ends this long after it began, however often it is used: a stolen token that is
    /// kept alive by use still dies.
    public var sessionMaxLifetime: Duration = .seconds(365 * 24 * 3600)
    /// The clock sessions and throttles go by; tests pass one they move by hand.
    public var clock: ServerClock = .system
    /// Timeouts, head size and connection limits that protect the HTTP layer (see ``HTTPLimits``).
    public var http = HTTPLimits()
    /// The storage quota of an account without one of its own, in bytes of stored record fields
    /// (``StorageQuota``); nil for none. 1 GiB: far more than contacts need, little for one account
    /// to take of a shared disk.
    public var defaultQuotaBytes: Int64? = 1 << 30
    /// Push sockets one account may have open on one server instance; one more is refused at its
    /// upgrade with `limitExceeded`. Each open socket holds a connection and memory on the instance.
    public var maximumPushSocketsPerAccount = 50
    /// How long a request waits for a PostgreSQL connection before it is told `serviceUnavailable`:
    /// while the database cannot be reached, the pool keeps requests waiting, and a client is better
    /// told to come back.
    public var databaseConnectionWait: Duration = .seconds(10)
    /// How long an asset upload that no record names is kept (its bytes count in its uploader's storage
    /// meanwhile); history compaction removes it after that.
    public var assetUploadLifetime: Duration = .seconds(24 * 3600)

    public init(
        limits: ServerLimits = ServerLimits(),
        userRateLimit: RateLimit = RateLimit(requestsPerSecond: 50, burst: 200),
        addressRateLimit: RateLimit = RateLimit(requestsPerSecond: 2, burst: 20),
        bcryptCost: UInt8 = 12,
        tombstoneRetention: Duration = .seconds(30 * 24 * 3600),
        requestReplayRetention: Duration = .seconds(24 * 3600),
        compactionInterval: Duration = .seconds(3600)
    ) {
        self.limits = limits
        self.userRateLimit = userRateLimit
        self.addressRateLimit = addressRateLimit
        self.bcryptCost = bcryptCost
        self.tombstoneRetention = tombstoneRetention
        self.requestReplayRetention = requestReplayRetention
        self.compactionInterval = compactionInterval
    }
}

extension Duration {
    /// The duration in seconds, as a double.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
