import Foundation
import GRDB
import SyncCore
import Synchronization

/// The embedded store: one SQLite file (WAL mode) through GRDB.
///
/// Writes are serialized by GRDB's writer; reads run concurrently on snapshots.
public final class SQLiteRecordStore: RecordStore {
    /// Internal, for the extensions in other files (`SQLiteRecordStore+Encryption.swift`).
    let pool: DatabasePool
    /// The storage quota of accounts without one of their own, in bytes; nil for none.
    public let defaultQuotaBytes: Int64?
    /// The uploads a request appends to now (`SQLiteRecordStore+Assets.swift`): one request at a time each.
    let appendingAssets = Mutex<Set<String>>([])

    /// Most bytes of the file each connection maps into memory.
    static let mappedBytes = 1 << 30
    /// Each connection's page cache, in KiB.
    static let cacheKiB = 32 * 1024

    /// Copies the write-ahead log into the file, off the writer.
    public let checkpointer: WALCheckpointer

    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    /// - Parameters:
    ///   - defaultQuotaBytes: the storage quota of accounts without one of their own (see
    ///     ``StorageQuota``); nil for none.
    ///   - checkpointer: copies the write-ahead log into the file (its thresholds, for tests).
    public init(path: String, defaultQuotaBytes: Int64? = nil, checkpointer: WALCheckpointer = WALCheckpointer())
        throws
    {
        self.defaultQuotaBytes = defaultQuotaBytes
        self.checkpointer = checkpointer
        pool = try DatabasePool(path: path, configuration: Self.configuration(checkpointer: checkpointer))
        let migrator = Self.migrator
        // A newer server's file: this one would misread what that one wrote.
        if try pool.read({ try migrator.hasBeenSuperseded($0) }) {
            let known = Set(migrator.migrations)
            let unknown = try pool.read { try migrator.appliedIdentifiers($0) }.subtracting(known).sorted()
            throw SchemaError(
                description: """
                    the storage file's schema is newer than this sync-server knows (it has \
                    \(unknown.joined(separator: ", "))); run the newer sync-server that wrote it, or restore a backup \
                    made before the upgrade
                    """)
        }
        try migrator.migrate(pool)
        try checkpointer.start(path: path)
    }

    /// How each connection is opened, its commits reported to `checkpointer`: also what `sync-bench
    /// server`'s bare-SQLite reference opens with.
    public static func configuration(checkpointer: WALCheckpointer) -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Pages read through memory, not a pread each, and a cache that holds an upload's working
            // set: at 10,000 contacts, reading pages was a third of the server's CPU.
            try db.execute(sql: "PRAGMA mmap_size = \(Self.mappedBytes)")
            try db.execute(sql: "PRAGMA cache_size = -\(Self.cacheKiB)")
        }
        checkpointer.install(in: &configuration)
        return configuration
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE account (
                        user_record_name TEXT PRIMARY KEY,
                        username TEXT NOT NULL UNIQUE COLLATE NOCASE,
                        password_hash TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        change_seq INTEGER NOT NULL DEFAULT 0,
                        compacted_seq INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE TABLE session (
                        token_hash TEXT PRIMARY KEY,
                        user_record_name TEXT NOT NULL REFERENCES account(user_record_name) ON DELETE CASCADE,
                        created_at INTEGER NOT NULL
                    );
                    CREATE TABLE zone (
                        owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        incarnation TEXT NOT NULL,
                        change_seq INTEGER NOT NULL,
                        deleted INTEGER NOT NULL DEFAULT 0,
                        deletion_reason TEXT,
                        modified_at INTEGER NOT NULL,
                        PRIMARY KEY (owner, zone_name)
                    ) WITHOUT ROWID;
                    CREATE INDEX zone_by_change ON zone(owner, change_seq);
                    CREATE TABLE record (
                        owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        record_name TEXT NOT NULL,
                        record_type TEXT NOT NULL,
                        fields BLOB NOT NULL,
                        change_tag TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        creator TEXT NOT NULL,
                        modified_at INTEGER NOT NULL,
                        modifier TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        deleted INTEGER NOT NULL,
                        PRIMARY KEY (owner, zone_name, record_name)
                    ) WITHOUT ROWID;
                    CREATE INDEX record_by_change ON record(owner, zone_name, seq);
                    CREATE TABLE client_request (
                        owner TEXT NOT NULL,
                        request_id TEXT NOT NULL,
                        body_hash BLOB NOT NULL,
                        response BLOB NOT NULL,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (owner, request_id)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v2: session.last_used_at") { db in
            // Sessions end after a while without use; older rows count as used when created.
            try db.execute(sql: "ALTER TABLE session ADD COLUMN last_used_at INTEGER")
        }
        migrator.registerMigration("v3: zone encryption keys, account encryption settings") { db in
            // Existing zones have no key (both columns NULL) until a device saves them with one.
            // The settings are a device's, kept for its other devices: the server cannot use them.
            try db.execute(
                sql: """
                    ALTER TABLE zone ADD COLUMN key_version INTEGER;
                    ALTER TABLE zone ADD COLUMN wrapped_key BLOB;
                    CREATE TABLE encryption_settings (
                        user_record_name TEXT PRIMARY KEY REFERENCES account(user_record_name) ON DELETE CASCADE,
                        salt BLOB NOT NULL,
                        cost_n INTEGER NOT NULL,
                        block_size_r INTEGER NOT NULL,
                        parallelism_p INTEGER NOT NULL,
                        key_version INTEGER NOT NULL,
                        verifier BLOB NOT NULL,
                        created_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v4: records in a rowid table") { db in
            // A table keyed by record name (random UUIDs, mostly) put each saved record in a page of its
            // own choosing, so a batch of 400 rewrote 400 pages, and a record of a kilobyte or more
            // spilled into an overflow page of its own (10,000 contacts took 44 MB where their fields
            // are 11 MB). In a rowid table a batch's records are written side by side at the end;
            // the index on the name holds only the key.
            try db.execute(
                sql: """
                    CREATE TABLE record_v4 (
                        owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        record_name TEXT NOT NULL,
                        record_type TEXT NOT NULL,
                        fields BLOB NOT NULL,
                        change_tag TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        creator TEXT NOT NULL,
                        modified_at INTEGER NOT NULL,
                        modifier TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        deleted INTEGER NOT NULL
                    );
                    INSERT INTO record_v4
                        SELECT owner, zone_name, record_name, record_type, fields, change_tag, created_at, creator,
                            modified_at, modifier, seq, deleted
                        FROM record ORDER BY owner, zone_name, seq;
                    DROP TABLE record;
                    ALTER TABLE record_v4 RENAME TO record;
                    CREATE UNIQUE INDEX record_by_name ON record(owner, zone_name, record_name);
                    CREATE INDEX record_by_change ON record(owner, zone_name, seq);
                    """)
        }
        migrator.registerMigration("v5: shares") { db in
            try db.execute(sql: SQLiteRecordStore.shareTables)
        }
        migrator.registerMigration("v6: record.writer") { db in
            // Which writer (an engine's X-Writer-ID) saved each version, so that its fetches can leave
            // out what it saved itself. Rows written before have none.
            try db.execute(sql: "ALTER TABLE record ADD COLUMN writer TEXT NOT NULL DEFAULT ''")
        }
        migrator.registerMigration("v7: record hierarchies and record-hierarchy shares") { db in
            try db.execute(sql: SQLiteRecordStore.hierarchyMigration)
        }
        migrator.registerMigration("v8: account lifecycle") { db in
            try db.execute(sql: SQLiteRecordStore.accountLifecycleMigration)
        }
        migrator.registerMigration("v9: storage quotas") { db in
            // Each account's and each zone's usage, counted from what is stored already.
            try db.execute(sql: SQLiteRecordStore.quotaMigration)
        }
        migrator.registerMigration("v10: change-token keys") { db in
            try db.execute(sql: SQLiteRecordStore.changeTokenKeyTable)
        }
        migrator.registerMigration("v11: account key pairs, participants' shared keys") { db in
            try db.execute(sql: SQLiteRecordStore.keyPairMigration)
        }
        migrator.registerMigration("v12: assets") { db in
            try db.execute(sql: SQLiteRecordStore.assetMigration)
        }
        return migrator
    }

    // MARK: Accounts and sessions

    public func createAccount(_ account: StoredAccount) async throws {
        try await pool.write { db in
            let taken = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM account WHERE username = ?)", arguments: [account.username])
            if taken == true {
                throw SyncError(
                    .constraintViolation, "username '\(account.username)' is taken; choose another or sign in")
            }
            try db.execute(
                sql: "INSERT INTO account (user_record_name, username, password_hash, created_at) VALUES (?, ?, ?, ?)",
                arguments: [
                    account.userRecordName, account.username, account.passwordHash,
                    account.createdAt.millisecondsSince1970,
                ])
        }
    }

    public func account(username: String) async throws -> StoredAccount? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM account WHERE username = ?", arguments: [username]).map(
                Self.account(from:))
        }
    }

    public func account(userRecordName: String) async throws -> StoredAccount? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM account WHERE user_record_name = ?", arguments: [userRecordName])
                .map(Self.account(from:))
        }
    }

    private static func account(from row: Row) -> StoredAccount {
        StoredAccount(
            userRecordName: row["user_record_name"], username: row["username"], passwordHash: row["password_hash"],
            createdAt: Date(millisecondsSince1970: row["created_at"]), isDisabled: row["disabled"] ?? false)
    }

    public func createSession(tokenHash: String, userRecordName: String, createdAt: Date) async throws {
        try await createSession(
            StoredSession(
                userRecordName: userRecordName, createdAt: createdAt, lastUsedAt: createdAt, id: StoredSession.newID()),
            tokenHash: tokenHash)
    }

    public func session(tokenHash: String) async throws -> StoredSession? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT user_record_name, created_at, COALESCE(last_used_at, created_at) AS last_used_at
                    FROM session WHERE token_hash = ?
                    """, arguments: [tokenHash]
            ).map { row in
                StoredSession(
                    userRecordName: row["user_record_name"], createdAt: Date(millisecondsSince1970: row["created_at"]),
                    lastUsedAt: Date(millisecondsSince1970: row["last_used_at"]))
            }
        }
    }

    public func touchSession(tokenHash: String, usedAt: Date) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE session SET last_used_at = ? WHERE token_hash = ?",
                arguments: [usedAt.millisecondsSince1970, tokenHash])
        }
    }

    public func deleteSession(tokenHash: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM session WHERE token_hash = ?", arguments: [tokenHash])
        }
    }

    public func deleteSessions(lastUsedBefore: Date) async throws -> Int {
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM session WHERE COALESCE(last_used_at, created_at) < ?",
                arguments: [lastUsedBefore.millisecondsSince1970])
            return db.changesCount
        }
    }

    // MARK: Zones

    public func zones(owner: String) async throws -> [StoredZone] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT zone_name, key_version, wrapped_key FROM zone
                    WHERE owner = ? AND deleted = 0 ORDER BY zone_name
                    """, arguments: [owner]
            ).map(Self.zone(from:))
        }
    }

    public func modifyZones(owner: String, saves: [StoredZone], deletes: [String], now: Date) async throws
        -> ZoneModificationOutcome
    {
        // A zone made again must start empty: what its deleted namesake left goes first, in chunks.
        try await purgeDeletedZones(owner: owner, zoneNames: saves.map(\.zoneName))
        return try await pool.write { db in
            var seq = try Self.changeSeq(db, owner: owner)
            var outcome = ZoneModificationOutcome(saved: [], created: [], keyed: [], deleted: [], missing: [])
            for save in saves {
                let name = save.zoneName
                let stored = try Row.fetchOne(
                    db,
                    sql:
                        "SELECT zone_name, key_version, wrapped_key FROM zone WHERE owner = ? AND zone_name = ? AND deleted = 0",
                    arguments: [owner, name]
                ).map(Self.zone(from:))
                switch ZoneSave.decide(stored: stored, save: save) {
                case .keep(let zone):
                    outcome.saved.append(zone)
                case .addKey(let key):
                    seq += 1
                    try db.execute(
                        sql: """
                            UPDATE zone SET key_version = ?, wrapped_key = ?, change_seq = ?, modified_at = ?
                            WHERE owner = ? AND zone_name = ?
                            """,
                        arguments: [key.keyVersion, key.wrappedKey, seq, now.millisecondsSince1970, owner, name])
                    outcome.keyed.append(name)
                    outcome.saved.append(save)
                case .create:
                    seq += 1
                    // Anything left of a deleted zone of this name (a purge is not done yet) goes now.
                    _ = try Self.purgeChunk(db, owner: owner, zoneName: name, limit: nil)
                    try db.execute(
                        sql: """
                            INSERT OR REPLACE INTO zone
                            (owner, zone_name, incarnation, change_seq, deleted, deletion_reason, modified_at, key_version, wrapped_key)
                            VALUES (?, ?, ?, ?, 0, NULL, ?, ?, ?)
                            """,
                        arguments: [
                            owner, name, UUID().uuidString, seq, now.millisecondsSince1970,
                            save.encryptionKey?.keyVersion, save.encryptionKey?.wrappedKey,
                        ])
                    outcome.created.append(name)
                    outcome.saved.append(save)
                }
            }
            for name in deletes {
                guard try Self.zoneIsLive(db, owner: owner, zoneName: name) else {
                    outcome.missing.append(name)
                    continue
                }
                seq += 1
                try Self.deleteZone(db, owner: owner, zoneName: name, reason: .deleted, seq: seq, now: now)
                outcome.deleted.append(name)
            }
            try Self.setChangeSeq(db, owner: owner, seq: seq)
            return outcome
        }
    }

    /// Turns a live zone into a tombstone that remembers why it went; its key goes with it, and its
    /// usage leaves the owner's at once. Its records are unreachable from now on; they are removed in
    /// chunks afterwards (``purgeDeletedZones(owner:zoneNames:)``), so that deleting a large zone
    /// does not hold the writer (and every other account's writes) for the whole of it.
    static func deleteZone(
        _ db: Database, owner: String, zoneName: String, reason: ZoneDeletionReason, seq: Int64, now: Date
    ) throws {
        try uncountZone(db, owner: owner, zoneName: zoneName)
        try db.execute(
            sql: "DELETE FROM share_membership WHERE owner = ? AND zone_name = ?", arguments: [owner, zoneName])
        // Its share goes with it: the participants see the zone leave their shared databases.
        try deleteShareRows(db, owner: owner, zoneName: zoneName)
        try db.execute(
            sql: """
                UPDATE zone SET deleted = 1, deletion_reason = ?, change_seq = ?, modified_at = ?,
                    key_version = NULL, wrapped_key = NULL
                WHERE owner = ? AND zone_name = ?
                """,
            arguments: [reason.rawValue, seq, now.millisecondsSince1970, owner, zoneName])
    }

    /// A zone row (`zone_name`, `key_version`, `wrapped_key`).
    private static func zone(from row: Row) -> StoredZone {
        StoredZone(zoneName: row["zone_name"], keyVersion: row["key_version"], wrappedKey: row["wrapped_key"])
    }

    // MARK: Records

    public func modifyRecords(
        owner: String, modifier: String, writer: String, request: ModifyRecordsRequest, limits: ServerLimits,
        now: Date, hierarchyAccess: [String: RecordHierarchy.Access]
    )
        async throws -> RecordModificationOutcome
    {
        // Each save's fields are encoded once, for the replay hash and for storing.
        let savedFields = request.saves.map { FieldCoding.encode($0.fields) }
        let bodyHash = try request.clientRequestID.map { _ in
            try ReplayGuard.hash(of: request, savedFields: savedFields)
        }
        // Read from the request alone, before the writer every account waits for.
        let assetIDs = AssetRules.namedAssetIDs(request)
        return try await pool.write { db in
            if let requestID = request.clientRequestID, let bodyHash,
                let earlier = try Row.fetchOne(
                    db, sql: "SELECT body_hash, response FROM client_request WHERE owner = ? AND request_id = ?",
                    arguments: [owner, requestID])
            {
                let response = try ReplayGuard.replay(
                    storedHash: earlier["body_hash"], storedResponse: earlier["response"], bodyHash: bodyHash,
                    requestID: requestID, request: request, savedFields: savedFields)
                return RecordModificationOutcome(responseBody: response, changed: false)
            }

            var hierarchy = RecordHierarchy.Context()
            hierarchy.access = hierarchyAccess
            let plan = try Self.plan(
                request, owner: owner, modifier: modifier, writer: writer, limits: limits, now: now,
                savedFields: savedFields, hierarchy: hierarchy,
                usage: try Self.storageUsage(db, owner: owner, defaultQuotaBytes: self.defaultQuotaBytes),
                assetIDs: assetIDs, db)
            try Self.apply(plan, owner: owner, now: now, db)
            let responseBody = try plan.responseBody(desiredKeys: request.desiredKeys)
            if let requestID = request.clientRequestID, let bodyHash {
                try db.execute(
                    sql:
                        "INSERT INTO client_request (owner, request_id, body_hash, response, created_at) VALUES (?, ?, ?, ?, ?)",
                    arguments: [
                        owner, requestID, bodyHash,
                        try ReplayGuard.stored(plan, responseBody: responseBody, for: request),
                        now.millisecondsSince1970,
                    ])
            }
            return RecordModificationOutcome(responseBody: responseBody, changed: !plan.rows.isEmpty)
        }
    }

    /// Reads what a modification touches and plans it (``RecordModificationPlanner``), inside a write.
    /// - Parameter assetIDs: ``AssetRules/namedAssetIDs(_:)`` of the request, when the caller read them
    ///   before the write.
    static func plan(
        _ request: ModifyRecordsRequest, owner: String, modifier: String, writer: String, limits: ServerLimits,
        now: Date, savedFields: [Data]?, hierarchy: RecordHierarchy.Context, usage: StorageUsage? = nil,
        assetIDs: [String]? = nil, _ db: Database
    ) throws -> RecordModificationPlanner.Plan {
        let keys = request.recordKeys
        var liveZones = Set<String>()
        for name in Set(keys.map(\.zoneName)) where try zoneIsLive(db, owner: owner, zoneName: name) {
            liveZones.insert(name)
        }
        let existing = try storedRecords(keys.filter { liveZones.contains($0.zoneName) }, owner: owner, db)
        return try RecordModificationPlanner.plan(
            request, owner: owner, modifier: modifier, writer: writer, liveZones: liveZones, existing: existing,
            currentSeq: try changeSeq(db, owner: owner), now: now.millisecondsSince1970, limits: limits,
            savedFields: savedFields,
            hierarchy: try hierarchyContext(db, owner: owner, request: request, base: hierarchy),
            assets: try assets(db, ids: assetIDs ?? AssetRules.namedAssetIDs(request)), usage: usage)
    }

    /// Writes a plan: its rows, the records its hierarchy changes move, the shares it deletes, and the
    /// zones' and the owner's change numbers.
    static func apply(_ plan: RecordModificationPlanner.Plan, owner: String, now: Date, _ db: Database) throws {
        try upsert(plan.rows, owner: owner, storedBytes: plan.storedBytes, db)
        let moves = try moveDescendants(of: plan.rootChanges, owner: owner, seq: plan.endSeq, now: now, db)
        for share in plan.deletedShares {
            try deleteShareRows(db, owner: owner, zoneName: share.zoneName, recordName: share.recordName)
        }
        for (zoneName, seq) in plan.zoneSeqs(after: moves) {
            try db.execute(
                sql: "UPDATE zone SET change_seq = ?, modified_at = ? WHERE owner = ? AND zone_name = ?",
                arguments: [seq, now.millisecondsSince1970, owner, zoneName])
        }
        try setChangeSeq(db, owner: owner, seq: moves.seq)
        for (key, assetIDs) in plan.assetAttachments {
            try attachAssets(db, assetIDs, to: AssetPlace(owner: owner, key: key), now: now)
        }
    }

    public func databaseChanges(owner: String, since: ChangeCursor?, limit: Int) async throws -> DatabaseChangePage {
        try await pool.read { db in
            let (currentSeq, compactedSeq) = try Self.seqs(db, owner: owner)
            try since?.checkCurrent(compactedSeq: compactedSeq, currentSeq: currentSeq)
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT zone_name, deleted, deletion_reason, change_seq FROM zone
                    WHERE owner = ? AND change_seq > ? ORDER BY change_seq LIMIT ?
                    """,
                arguments: [owner, since?.seq ?? 0, limit + 1])
            return DatabaseChangePage(
                rows: rows.map {
                    DatabaseChangePage.Row(
                        zoneName: $0["zone_name"], isDeleted: $0["deleted"], deletionReason: $0["deletion_reason"],
                        seq: $0["change_seq"])
                }, limit: limit, owner: owner, currentSeq: currentSeq)
        }
    }

    public func zoneChanges(
        owner: String, zoneName: String, since: ChangeCursor?, limit: Int, excludingWriter: String?
    ) async throws -> ZoneChangePage {
        try await pool.read { db in
            try Self.zoneChanges(
                db, owner: owner, zoneName: zoneName, since: since, limit: limit, excludingWriter: excludingWriter)
        }
    }

    static func zoneChanges(
        _ db: Database, owner: String, zoneName: String, since: ChangeCursor?, limit: Int, excludingWriter: String?
    ) throws -> ZoneChangePage {
        guard
            let zone = try Row.fetchOne(
                db, sql: "SELECT incarnation FROM zone WHERE owner = ? AND zone_name = ? AND deleted = 0",
                arguments: [owner, zoneName])
        else {
            throw SyncError(.zoneNotFound, "zone '\(zoneName)' does not exist")
        }
        let incarnation: String = zone["incarnation"]
        let (currentSeq, compactedSeq) = try seqs(db, owner: owner)
        try since?.checkCurrent(compactedSeq: compactedSeq, currentSeq: currentSeq, incarnation: incarnation)
        let statement = try db.cachedStatement(
            sql: """
                SELECT \(StoredRecord.columns) FROM record WHERE owner = ? AND zone_name = ? AND seq > ?
                    AND (deleted = 1 OR ? = '' OR writer <> ?)
                ORDER BY seq LIMIT ?
                """)
        // "" (rows no writer saved) leaves nothing out.
        let excluded = excludingWriter ?? ""
        // Each record is read from the statement's row as it steps: copying the rows first cost more
        // than reading them.
        let rows = try Row.fetchCursor(
            statement, arguments: [owner, zoneName, since?.seq ?? 0, excluded, excluded, limit + 1])
        var records: [StoredRecord] = []
        records.reserveCapacity(limit + 1)
        while let row = try rows.next() { records.append(record(from: row)) }
        return ZoneChangePage(
            rows: records, limit: limit, owner: owner, zoneName: zoneName,
            incarnation: incarnation, currentSeq: currentSeq)
    }

    public func lookupRecords(owner: String, keys: [RecordKey]) async throws -> LookupOutcome {
        try await pool.read { db in
            let statement = try db.cachedStatement(
                sql:
                    "SELECT \(StoredRecord.columns) FROM record WHERE owner = ? AND zone_name = ? AND record_name = ? AND deleted = 0"
            )
            var liveZones: [String: Bool] = [:]
            var outcome = LookupOutcome(items: [])
            for key in keys {
                if liveZones[key.zoneName] == nil {
                    liveZones[key.zoneName] = try Self.zoneIsLive(db, owner: owner, zoneName: key.zoneName)
                }
                if liveZones[key.zoneName] != true {
                    outcome.items.append(.zoneNotFound)
                } else if let row = try Row.fetchOne(statement, arguments: [owner, key.zoneName, key.recordName]) {
                    outcome.items.append(.found(Self.record(from: row)))
                } else {
                    outcome.items.append(.unknownItem)
                }
            }
            return outcome
        }
    }

    // MARK: History

    public func compactHistory(tombstonesBefore: Date, requestsBefore: Date) async throws -> Int {
        // Records deleted zones left (a purge cut short) go before their zones' tombstones can.
        try await purgeDeletedZones(owner: nil, zoneNames: nil)
        return try await pool.write { db in
            let cutoff = tombstonesBefore.millisecondsSince1970
            try db.execute(
                sql: """
                    UPDATE account SET compacted_seq = MAX(compacted_seq,
                        COALESCE((SELECT MAX(seq) FROM record WHERE owner = user_record_name AND deleted = 1 AND modified_at < ?), 0),
                        COALESCE((SELECT MAX(change_seq) FROM zone WHERE owner = user_record_name AND deleted = 1 AND modified_at < ?), 0))
                    """,
                arguments: [cutoff, cutoff])
            // Membership moves are history as tombstones are: tokens from before them expire with them.
            try db.execute(
                sql: """
                    UPDATE account SET compacted_seq = MAX(compacted_seq, COALESCE((SELECT MAX(seq) FROM share_membership
                        WHERE owner = user_record_name AND created_at < ?), 0))
                    """, arguments: [cutoff])
            try db.execute(sql: "DELETE FROM share_membership WHERE created_at < ?", arguments: [cutoff])
            try db.execute(sql: "DELETE FROM record WHERE deleted = 1 AND modified_at < ?", arguments: [cutoff])
            var removed = db.changesCount
            try db.execute(sql: "DELETE FROM zone WHERE deleted = 1 AND modified_at < ?", arguments: [cutoff])
            removed += db.changesCount
            try db.execute(
                sql: "DELETE FROM client_request WHERE created_at < ?",
                arguments: [requestsBefore.millisecondsSince1970])
            return removed
        }
    }

    // MARK: Helpers

    /// The strings of `items` as a JSON array: the one argument of `IN (SELECT value FROM json_each(?))`,
    /// so that one statement takes any number of names.
    static func jsonList<Items: Collection>(_ items: Items, _ string: (Items.Element) -> String) -> String {
        var list = JSONWriter(capacity: 40 * items.count + 2)
        list.array(items) { $0.string(string($1)) }
        return String(decoding: list.bytes, as: UTF8.self)
    }

    /// The stored rows (live or tombstones) of `keys`, one query per zone: a statement run per key cost
    /// more than finding the rows (most keys of an upload have none).
    static func storedRecords(_ keys: [RecordKey], owner: String, _ db: Database) throws -> [RecordKey: StoredRecord] {
        let lookup = try db.cachedStatement(
            sql: """
                SELECT \(StoredRecord.columns) FROM record
                WHERE owner = ? AND zone_name = ? AND record_name IN (SELECT value FROM json_each(?))
                """)
        var found: [RecordKey: StoredRecord] = [:]
        for (zoneName, zoneKeys) in Dictionary(grouping: keys, by: \.zoneName) {
            let rows = try Row.fetchCursor(
                lookup, arguments: [owner, zoneName, jsonList(zoneKeys, \.recordName)])
            while let row = try rows.next() {
                let record = Self.record(from: row)
                found[record.key] = record
            }
        }
        return found
    }

    /// Writes record rows (new ones, new versions, tombstones) as they are, and counts them in the
    /// zones' and the owner's usage; `storedBytes` gives the size of what some of them replace, when the
    /// caller read it already under the same lock.
    static func upsert(
        _ rows: [StoredRecord], owner: String, storedBytes: [RecordKey: Int64] = [:], _ db: Database
    ) throws {
        try countUsage(of: rows, owner: owner, storedBytes: storedBytes, db)
        try writeRows(rows, owner: owner, db)
    }

    /// Writes record rows as they are, replacing the versions they follow, without counting them in any
    /// usage (``upsert(_:owner:storedBytes:_:)`` counts them first). Public for `sync-bench server`'s bare-SQLite
    /// reference, which times this statement alone on the same rows.
    public static func writeRows(_ rows: [StoredRecord], owner: String, _ db: Database) throws {
        let upsert = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO record
                (owner, zone_name, record_name, record_type, fields, change_tag, created_at, creator, modified_at, modifier,
                    seq, deleted, writer, parent_name, share_name, share_root)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        var insert = SQLiteRowWriter(upsert)
        for row in rows {
            try insert.text(owner)
            try insert.text(row.key.zoneName)
            try insert.text(row.key.recordName)
            try insert.text(row.recordType)
            try insert.blob(row.fields)
            try insert.text(row.changeTag)
            try insert.integer(row.createdAt)
            try insert.text(row.creator)
            try insert.integer(row.modifiedAt)
            try insert.text(row.modifier)
            try insert.integer(row.seq)
            try insert.integer(row.isDeleted ? 1 : 0)
            try insert.text(row.writer)
            try insert.text(row.parentName)
            try insert.text(row.shareName)
            try insert.text(row.shareRoot)
            try insert.step()
        }
    }

    /// Whether the zone exists and is not deleted.
    static func zoneIsLive(_ db: Database, owner: String, zoneName: String) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT deleted = 0 FROM zone WHERE owner = ? AND zone_name = ?", arguments: [owner, zoneName])
            == true
    }

    static func changeSeq(_ db: Database, owner: String) throws -> Int64 {
        try seqs(db, owner: owner).current
    }

    private static func seqs(_ db: Database, owner: String) throws -> (current: Int64, compacted: Int64) {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT change_seq, compacted_seq FROM account WHERE user_record_name = ?", arguments: [owner])
        else {
            throw SyncError.accountGone
        }
        return (row["change_seq"], row["compacted_seq"])
    }

    static func setChangeSeq(_ db: Database, owner: String, seq: Int64) throws {
        try db.execute(sql: "UPDATE account SET change_seq = ? WHERE user_record_name = ?", arguments: [seq, owner])
    }

    /// The record in a row of ``StoredRecord/columns``, read by position: finding a column by name
    /// costs a case-insensitive comparison of every name, which a page of 400 rows felt.
    static func record(from row: Row) -> StoredRecord {
        StoredRecord(
            key: RecordKey(zoneName: row[0], recordName: row[1]), recordType: row[2], fields: row[3],
            changeTag: row[4], createdAt: row[5], creator: row[6], modifiedAt: row[7], modifier: row[8], seq: row[9],
            isDeleted: row[10], parentName: row[11], shareName: row[12], shareRoot: row[13])
    }
}
