import Foundation
import Logging
import PostgresNIO
import SyncCore
import Synchronization

/// A store over several PostgreSQL clusters (each one database, which may be a primary with a
/// standby): every account lives on one of them, as ``AccountDirectory`` says, and every call is
/// answered by its account's cluster.
///
/// A ``RecordStore`` never reads across owners, so a call that names an owner goes to the owner's
/// cluster whole: a shared zone lives with its owner, and participants on other clusters read and
/// write it there. What a call names by token (a session, a share's URL, an asset) is looked for on
/// the cluster this instance last found it on, then on each cluster in turn. What concerns every
/// account (lists for operators, compaction, collection) runs on each cluster.
///
/// The first cluster is the main one: it holds the directory and the change-token keys, and carries
/// the instances' push notices (``SyncServerApplication/push(for:logger:)``).
///
/// **Routing stays right while accounts move.** An instance keeps an account's placement for at most
/// ``placementLifetime``. A move (``move(username:to:progress:)``) marks the account as moving, copies
/// it under the lock every write of the account takes first, and deletes its account row on the old
/// cluster in that same transaction. A write that reached the old cluster later finds no account
/// there; the store then reads the placement again and runs the call where the account is now (or
/// answers `serviceUnavailable` while the move runs). The rest of the old copy is deleted only after
/// every instance has read the new placement.
public final class ClusteredRecordStore: Sendable {
    /// The clusters' names, the main one first, in the order the operator gave them.
    public let clusterNames: [String]
    let clusters: [String: PostgresRecordStore]
    /// Where new accounts go.
    public let placementRule: PlacementRule
    let directory: AccountDirectory
    let logger: Logger

    /// How long an instance trusts the placement it read of an account.
    public static let placementLifetime: Duration = .seconds(1)

    private struct CachedPlacement {
        var placement: AccountDirectory.Placement?
        var readAt: ContinuousClock.Instant
    }

    private let placements = Mutex<[String: CachedPlacement]>([:])
    /// The cluster each session token hash, share token and asset ID was last found on.
    private let hints = Mutex<[String: String]>([:])
    private static let hintLimit = 100_000

    /// The main cluster's store: the directory's, the change-token keys' and the push relay's.
    public var main: PostgresRecordStore { clusters[clusterNames[0]]! }

    /// A store over `clusters` (the main one first), each already connected and migrated; creates the
    /// directory when it is missing and places the accounts it does not list on the cluster holding them.
    /// - Throws: `StartupError` for names given twice or empty, or a rule naming no cluster given.
    public init(
        clusters: [(name: String, store: PostgresRecordStore)], placementRule: PlacementRule, logger: Logger
    ) async throws {
        let names = clusters.map(\.name)
        guard !names.isEmpty else { throw StartupError("no cluster given") }
        if let bad = names.first(where: { !Self.isValidName($0) }) {
            throw StartupError(
                "'\(bad)' is not a cluster name: use letters, digits, '-' and '_' (at most 63), as in --cluster eu-1=postgres://…"
            )
        }
        if let twice = names.first(where: { name in names.filter { $0 == name }.count > 1 }) {
            throw StartupError("the cluster '\(twice)' is given twice; give each cluster once, with a name of its own")
        }
        if case .cluster(let name) = placementRule, !names.contains(name) {
            throw StartupError(
                "--placement names '\(name)', which is not a cluster given; use 'fewest' or one of: \(names.joined(separator: ", "))"
            )
        }
        var named: [String: String] = [:]
        for (name, store) in clusters {
            let identity = try await Self.identity(of: store)
            if let other = named[identity] {
                throw StartupError(
                    "the clusters '\(other)' and '\(name)' are one database; give each cluster once, with a database of its own"
                )
            }
            named[identity] = name
        }
        self.clusterNames = names
        self.clusters = Dictionary(uniqueKeysWithValues: clusters.map { ($0.name, $0.store) })
        self.placementRule = placementRule
        self.logger = logger
        directory = AccountDirectory(store: clusters[0].store)
        try await directory.prepare(clusters: clusters)
    }

    /// Connects to every cluster (`name=url` pairs, the main one first), as
    /// ``PostgresRecordStore/connect(url:logger:defaultQuotaBytes:connectionWait:)`` connects to one.
    /// - Throws: `StartupError` naming the cluster that cannot be used, and why.
    public static func connect(
        clusters: [(name: String, url: String)], placementRule: PlacementRule, logger: Logger,
        defaultQuotaBytes: Int64? = nil, connectionWait: Duration = .seconds(10)
    ) async throws -> ClusteredRecordStore {
        var stores: [(name: String, store: PostgresRecordStore)] = []
        do {
            for (name, url) in clusters {
                let store = try await PostgresRecordStore.connectToServe(
                    url: url, cluster: name, logger: logger, defaultQuotaBytes: defaultQuotaBytes,
                    connectionWait: connectionWait)
                stores.append((name, store))
            }
            return try await ClusteredRecordStore(clusters: stores, placementRule: placementRule, logger: logger)
        } catch {
            for (_, store) in stores { store.close() }
            throw error
        }
    }

    /// Closes every cluster's connections.
    public func close() {
        for store in clusters.values { store.close() }
    }

    /// A random identifier the database keeps (made on first use): two names for one database (its
    /// address written twice, or two addresses of its nodes) give the same.
    private static func identity(of store: PostgresRecordStore) async throws -> String {
        try await store.query(
            "CREATE TABLE IF NOT EXISTS cluster_identity (id TEXT PRIMARY KEY)", logger: store.logger)
        try await store.query(
            """
            INSERT INTO cluster_identity SELECT gen_random_uuid()::text
            WHERE NOT EXISTS (SELECT 1 FROM cluster_identity) ON CONFLICT DO NOTHING
            """, logger: store.logger)
        return try await store.query("SELECT min(id) FROM cluster_identity", logger: store.logger)
            .first?.decode(String.self) ?? ""
    }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 63
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_")
            }
    }

    /// The store of cluster `name`.
    func store(_ name: String) throws -> PostgresRecordStore {
        guard let store = clusters[name] else {
            throw SyncError(
                .internalError,
                "the directory places an account on cluster '\(name)', which this server was not given; start every instance with the same --cluster options"
            )
        }
        return store
    }

    /// Each cluster's store, the main one first.
    public var clusterStores: [PostgresRecordStore] { clusterNames.map { clusters[$0]! } }

    // MARK: Placement

    /// Where the account `owner` lives: as read within ``placementLifetime``, or read now.
    func placement(of owner: String, fresh: Bool = false) async throws -> AccountDirectory.Placement? {
        let now = ContinuousClock.now
        if !fresh, let cached = placements.withLock({ $0[owner] }),
            now - cached.readAt < Self.placementLifetime
        {
            return cached.placement
        }
        let placement = try await directory.placement(userRecordName: owner)
        placements.withLock { cache in
            if cache.count >= Self.hintLimit { cache.removeAll() }
            cache[owner] = CachedPlacement(placement: placement, readAt: now)
        }
        return placement
    }

    /// The cluster the account named `username` lives on now (as the directory says), or nil when there
    /// is no such account.
    public func cluster(ofUsername username: String) async throws -> String? {
        try await directory.placement(username: username)?.cluster
    }

    /// How many rows each cluster holds of the account `userRecordName` (its account row, zones, records,
    /// shares, assets and the rest ``AccountRows`` lists), for checking where an account's data is.
    public func rowCounts(of userRecordName: String) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for name in clusterNames {
            var count = 0
            for (table, condition) in AccountRows.tables {
                let rows = try await store(name).withConnection { connection in
                    try await connection.query(
                        AccountRows.statement("SELECT COUNT(*) FROM \(table) WHERE \(condition)", userRecordName),
                        logger: self.logger
                    ).collect()
                }
                count += Int(try rows.first?.decode(Int64.self) ?? 0)
            }
            counts[name] = count
        }
        return counts
    }

    /// Forgets what this instance read of an account's placement.
    func forgetPlacement(of owner: String) {
        _ = placements.withLock { $0.removeValue(forKey: owner) }
    }

    /// What a request of an account being moved is told.
    static var moving: SyncError {
        SyncError(
            .serviceUnavailable, "this account is being moved to another database; try again in a moment",
            retryAfter: 1)
    }

    /// Runs `body` on the cluster of `owner` (the main one for a name no account has). When that cluster
    /// says the account is not there, the placement is read again: a moved account's call runs again where
    /// it is now.
    func owning<Result>(_ owner: String, _ body: (PostgresRecordStore) async throws -> Result) async throws
        -> Result
    {
        var placement = try await placement(of: owner)
        while true {
            if placement?.moving == true { throw Self.moving }
            let store = try placement.map { try self.store($0.cluster) } ?? main
            do {
                return try await body(store)
            } catch let error as SyncError where error.code == .notAuthenticated {
                let now = try await self.placement(of: owner, fresh: true)
                guard now != placement else { throw error }
                placement = now
            }
        }
    }

    /// The first answer of `body` that is not nil: from the cluster `key` was last found on, then from
    /// each other cluster; remembers where it was found.
    func searching<Result>(_ key: String, _ body: (PostgresRecordStore) async throws -> Result?) async throws
        -> Result?
    {
        let hinted = hints.withLock { $0[key] }
        for name in (hinted.map { [$0] } ?? []) + clusterNames.filter({ $0 != hinted }) {
            if let found = try await body(try store(name)) {
                if name != hinted { remember(key, on: name) }
                return found
            }
        }
        return nil
    }

    /// Notes that `key` (a token hash, a share token, an asset ID) is on cluster `name`.
    func remember(_ key: String, on name: String) {
        hints.withLock { hints in
            if hints.count >= Self.hintLimit { hints.removeAll() }
            hints[key] = name
        }
    }

    /// The cluster `key` was last found on, if this instance found it.
    func hint(_ key: String) -> String? { hints.withLock { $0[key] } }

    /// The cluster of `owner`'s placement, for remembering what it makes.
    func clusterName(of owner: String) async throws -> String {
        try await placement(of: owner)?.cluster ?? clusterNames[0]
    }

    /// Runs `body` on every cluster, in order, and gathers the answers.
    func everywhere<Result>(_ body: (PostgresRecordStore) async throws -> Result) async throws -> [Result] {
        var results: [Result] = []
        for store in clusterStores { results.append(try await body(store)) }
        return results
    }
}
