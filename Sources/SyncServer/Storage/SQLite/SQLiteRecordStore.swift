import Foundation
import GRDB
import SyncCore
import Synchronization

/// The embedded store: one SQLite file (WAL mode) through GRDB.
///
/// Writes are serialized by GRDB's writer; reads run concurrently on snapshots.
public final class SQLiteRecordStore: RecordStoreBackend {
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

    // MARK: Transactions

    /// Runs the shared steps in GRDB's write transaction, on its writer: the one every account's
    /// writes wait for, so the steps' account lock is the writer itself.
    func write<Result: Sendable>(_ work: @escaping @Sendable (SQLiteTransaction) async throws -> Result)
        async throws -> Result
    {
        try await pool.write { db in
            nonisolated(unsafe) let db = db
            return try InlineExecutor.run { try await work(SQLiteTransaction(db: db)) }
        }
    }

    /// Runs the shared steps on a snapshot, beside the writer.
    func read<Result: Sendable>(_ work: @escaping @Sendable (SQLiteTransaction) async throws -> Result)
        async throws -> Result
    {
        try await pool.read { db in
            nonisolated(unsafe) let db = db
            return try InlineExecutor.run { try await work(SQLiteTransaction(db: db)) }
        }
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

    public func deleteSession(tokenHash: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM session WHERE token_hash = ?", arguments: [tokenHash])
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
            ).map(SQLiteTransaction.zone(from:))
        }
    }

    // MARK: Records

    public func databaseChanges(owner: String, since: ChangeCursor?, limit: Int) async throws -> DatabaseChangePage {
        try await pool.read { db in
            let (currentSeq, compactedSeq) = try SQLiteTransaction(db: db).lockAccount(owner: owner)
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
        let (currentSeq, compactedSeq) = try SQLiteTransaction(db: db).lockAccount(owner: owner)
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

    // MARK: Rows

    /// Writes record rows as they are, replacing the versions they follow, without counting them in any
    /// usage (``StoreTransaction/upsert(_:owner:storedBytes:)`` counts them first). Public for `sync-bench
    /// server`'s bare-SQLite reference, which times this statement alone on the same rows.
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

    /// The record in a row of ``StoredRecord/columns``, read by position: finding a column by name
    /// costs a case-insensitive comparison of every name, which a page of 400 rows felt.
    static func record(from row: Row) -> StoredRecord {
        StoredRecord(
            key: RecordKey(zoneName: row[0], recordName: row[1]), recordType: row[2], fields: row[3],
            changeTag: row[4], createdAt: row[5], creator: row[6], modifiedAt: row[7], modifier: row[8], seq: row[9],
            isDeleted: row[10], parentName: row[11], shareName: row[12], shareRoot: row[13])
    }
}
