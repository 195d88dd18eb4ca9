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

    /// The schema's history (``SchemaHistory``) as GRDB's migrations.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for version in SchemaHistory.versions {
            for (index, step) in version.sqlite.enumerated() {
                let fill = index == version.sqlite.count - 1 ? version.fill : nil
                migrator.registerMigration(step.identifier) { db in
                    try db.execute(sql: step.sql)
                    guard let fill else { return }
                    nonisolated(unsafe) let db = db
                    try InlineExecutor.run { try await fill(SQLiteTransaction(db: db)) }
                }
            }
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

    /// A snapshot too: SQLite's costs nothing more.
    func readStatement<Result: Sendable>(_ work: @escaping @Sendable (SQLiteTransaction) async throws -> Result)
        async throws -> Result
    {
        try await read(work)
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

    // MARK: Rows

    /// Writes record rows as they are, replacing the versions they follow, without counting them in any
    /// usage or indexing their references (``StoreTransaction/upsert(_:owner:storedBytes:storedReferrers:)``
    /// does those). Public for `sync-bench server`'s bare-SQLite reference, which times this statement
    /// alone on the same rows.
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
}
