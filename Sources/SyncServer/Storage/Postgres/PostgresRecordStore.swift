import Foundation
import Logging
import PostgresNIO
import SyncCore

/// The store for several server instances: one PostgreSQL database through postgres-nio's pool.
///
/// It answers exactly as ``SQLiteRecordStore`` does; the semantics live in the planner both share.
///
/// **Change positions never skip.** Each account row holds the account's change counter. A write
/// locks that row first (`SELECT … FOR UPDATE`) and takes positions from it inside its transaction,
/// so writers of one account queue on the row and commit in the order of their positions. A reader
/// works in one snapshot (a single statement, which is one by itself, or a repeatable-read
/// transaction when it needs several), which therefore holds every change up to the counter it
/// reads and none after: a token it hands out can never sit past a change that commits later. A
/// global sequence would not do: a writer could take position 8, another 9 and commit first, and a
/// reader handed 9 would never see 8.
public final class PostgresRecordStore: RecordStoreBackend {
    /// The pool of the node that takes writes (several nodes: the one that does now).
    let primary: PostgresPrimary
    /// Where the store logs (its queries log at debug).
    public let logger: Logger
    /// The storage quota of accounts without one of their own, in bytes; nil for none.
    public let defaultQuotaBytes: Int64?
    /// How long a request waits for a connection: the pool keeps requests waiting while it cannot
    /// connect, and a client is better told to come back.
    let connectionWait: Duration

    private init(primary: PostgresPrimary, logger: Logger, defaultQuotaBytes: Int64?, connectionWait: Duration) {
        self.primary = primary
        self.logger = logger
        self.defaultQuotaBytes = defaultQuotaBytes
        self.connectionWait = connectionWait
    }

    /// Connects to the database at `url` (`postgres://user:password@host:port/database`, or several
    /// nodes of one cluster as libpq names them: `postgres://user@host1:port1,host2:port2/database`,
    /// written to wherever the primary is now), brings its schema up to date and returns the store;
    /// ``close()`` ends its connections.
    /// - Parameters:
    ///   - defaultQuotaBytes: the storage quota of accounts without one of their own (see
    ///     ``StorageQuota``); nil for none.
    ///   - connectionWait: how long a request waits for a connection before it is told
    ///     `serviceUnavailable` (``SyncServerConfiguration/databaseConnectionWait``).
    public static func connect(
        url: String, logger: Logger, defaultQuotaBytes: Int64? = nil, connectionWait: Duration = .seconds(10)
    ) async throws -> PostgresRecordStore {
        let primary = PostgresPrimary(address: try PostgresURL.address(url), logger: logger)
        let store = PostgresRecordStore(
            primary: primary, logger: logger, defaultQuotaBytes: defaultQuotaBytes, connectionWait: connectionWait)
        do {
            try await primary.start(within: PostgresSchema.connectTimeout)
            try await PostgresSchema.migrate(primary.current().client, logger: logger)
        } catch {
            store.close()
            throw error
        }
        return store
    }

    /// Connects as ``connect(url:logger:defaultQuotaBytes:connectionWait:)`` does for a server about to
    /// serve, turning what stops it into a `StartupError` that names the database (`cluster`: which of
    /// several it is) and what to check.
    static func connectToServe(
        url: String, cluster: String? = nil, logger: Logger, defaultQuotaBytes: Int64?, connectionWait: Duration
    ) async throws -> PostgresRecordStore {
        let subject = cluster.map { "cluster '\($0)'" } ?? "the database"
        do {
            return try await connect(
                url: url, logger: logger, defaultQuotaBytes: defaultQuotaBytes, connectionWait: connectionWait)
        } catch let error as SchemaError {
            throw StartupError((cluster.map { "cluster '\($0)': " } ?? "") + error.description)
        } catch let error as SyncError where error.code == .serviceUnavailable {
            throw StartupError(
                "cannot connect to \(subject) at \(PostgresURL.redacted(url)) within \(PostgresSchema.connectTimeout.components.seconds) s; check that PostgreSQL runs there and takes this user, password and database"
            )
        } catch {
            throw StartupError(
                "cannot use \(subject): \(String(reflecting: error)); check that PostgreSQL runs and the address is right"
            )
        }
    }

    /// The newest schema version this server knows; a database at a newer one is refused.
    public static var schemaVersion: Int { PostgresSchema.currentVersion }
    /// Every schema version this server knows, in order (numbers may skip: branches merged).
    public static var schemaVersions: [Int] { PostgresSchema.migrations.map(\.version) }

    /// The client settings for a database address, for tools that connect beside a store: of the node
    /// that takes writes now, when the address names several.
    public static func configuration(url: String, logger: Logger) async throws -> PostgresClient.Configuration {
        let primary = PostgresPrimary(address: try PostgresURL.address(url), logger: logger)
        return primary.address.clientConfiguration(
            try await primary.writableNode(within: PostgresSchema.connectTimeout))
    }

    /// The same database address naming database `name` instead (its nodes and settings as written).
    public static func url(_ url: String, database name: String) throws -> String {
        try PostgresURL.replacingDatabase(in: url, with: name)
    }

    /// Lends a connection of the store's pool: for tests and tools that look at what is stored.
    public func withConnection<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    )
        async throws -> Result
    {
        let pool = try primary.current()
        do {
            return try await PostgresAvailability.checked {
                try await PostgresAvailability.leasing(within: self.connectionWait) { leased in
                    try await pool.client.withConnection { connection in
                        leased()
                        return try await pool.watch.run(on: connection) { try await body(connection) }
                    }
                }
            }
        } catch let error as SyncError where error.code == .serviceUnavailable {
            // The node is gone or no longer takes writes: with several nodes, the primary is looked for.
            primary.lost(generation: pool.generation)
            throw error
        } catch is CancellationError where !Task.isCancelled {
            // Not this request's cancellation: its pool was closed under it, for another node's.
            throw PostgresAvailability.unreachable
        }
    }

    /// Runs one statement on a pooled connection; its rows, read before the connection goes back to the pool.
    @discardableResult
    func query(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await withConnection { connection in try await connection.query(query, logger: logger).collect() }
    }

    /// Closes the connections.
    public func close() {
        primary.close()
    }

    deinit {
        primary.close()
    }

    // MARK: Accounts and sessions

    public func createAccount(_ account: StoredAccount) async throws {
        let inserted = try await query(
            """
            INSERT INTO account (user_record_name, username, username_folded, password_hash, created_at)
            VALUES (\(account.userRecordName), \(account.username), \(Self.folded(account.username)),
                \(account.passwordHash), \(account.createdAt.millisecondsSince1970))
            ON CONFLICT (username_folded) DO NOTHING
            RETURNING 1
            """, logger: logger
        )
        if inserted.isEmpty {
            throw SyncError(.constraintViolation, "username '\(account.username)' is taken; choose another or sign in")
        }
    }

    public func account(username: String) async throws -> StoredAccount? {
        try await accounts(
            "SELECT \(unescaped: Self.accountColumns) FROM account WHERE username_folded = \(Self.folded(username))")
    }

    public func account(userRecordName: String) async throws -> StoredAccount? {
        try await accounts(
            "SELECT \(unescaped: Self.accountColumns) FROM account WHERE user_record_name = \(userRecordName)")
    }

    private static let accountColumns = "user_record_name, username, password_hash, created_at, disabled"

    private func accounts(_ statement: PostgresQuery) async throws -> StoredAccount? {
        for (name, username, hash, created, disabled) in try await query(statement, logger: logger).decode(
            (String, String, String, Int64, Bool).self)
        {
            return StoredAccount(
                userRecordName: name, username: username, passwordHash: hash,
                createdAt: Date(millisecondsSince1970: created), isDisabled: disabled)
        }
        return nil
    }

    /// ASCII letters lowercased and nothing else, as SQLite's NOCASE compares.
    static func folded(_ username: String) -> String {
        String(
            decoding: username.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    public func session(tokenHash: String) async throws -> StoredSession? {
        for (name, created, used) in try await query(
            "SELECT user_record_name, created_at, last_used_at FROM session WHERE token_hash = \(tokenHash)",
            logger: logger
        ).decode((String, Int64, Int64).self) {
            return StoredSession(
                userRecordName: name, createdAt: Date(millisecondsSince1970: created),
                lastUsedAt: Date(millisecondsSince1970: used))
        }
        return nil
    }

    public func deleteSession(tokenHash: String) async throws {
        try await query("DELETE FROM session WHERE token_hash = \(tokenHash)", logger: logger)
    }

    // MARK: Rows

    /// Writes record rows as they are, in one transaction, with the statement a save's rows are written
    /// with, and nothing else: no usage counted, no references indexed
    /// (``StoreTransaction/upsert(_:owner:storedBytes:storedReferrers:)`` does those). Public for
    /// `sync-bench server --storage postgres`'s bare-PostgreSQL reference, which times this statement alone
    /// on the same rows, as ``SQLiteRecordStore/writeRows(_:owner:_:)`` is for SQLite's.
    public func writeRows(_ rows: [StoredRecord], owner: String) async throws {
        try await write { transaction in try await transaction.writeRecordRows(rows, owner: owner) }
    }

    // MARK: Transactions

    /// Runs the shared steps in one transaction on a pooled connection.
    func write<Result: Sendable>(_ work: @escaping @Sendable (PostgresTransaction) async throws -> Result)
        async throws -> Result
    {
        try await transaction { connection in
            try await work(PostgresTransaction(connection: connection, logger: self.logger))
        }
    }

    /// Runs one statement's read on a pooled connection, outside a transaction.
    func readStatement<Result: Sendable>(_ work: @escaping @Sendable (PostgresTransaction) async throws -> Result)
        async throws -> Result
    {
        try await withConnection { connection in
            try await work(PostgresTransaction(connection: connection, logger: self.logger))
        }
    }

    /// Runs the shared steps in one read-only, repeatable-read snapshot.
    func read<Result: Sendable>(_ work: @escaping @Sendable (PostgresTransaction) async throws -> Result)
        async throws -> Result
    {
        try await snapshot { connection in
            try await work(PostgresTransaction(connection: connection, logger: self.logger))
        }
    }

    /// Runs `work` in one read-only, repeatable-read snapshot of the database.
    func snapshot<Result: Sendable>(_ work: @escaping @Sendable (PostgresConnection) async throws -> Result)
        async throws -> Result
    {
        try await transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", work)
    }

    /// Runs `work` in one transaction on a pooled connection; read-committed unless `begin` says otherwise.
    func transaction<Result: Sendable>(
        begin: PostgresQuery = "BEGIN", _ work: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await withConnection { connection in
            try await Self.transaction(connection, begin: begin, logger: self.logger, work)
        }
    }

    /// Begins a transaction, runs `work`, commits; rolls back and rethrows what `work` threw, as it
    /// is (postgres-nio's own `withTransaction` wraps it, and a `SyncError` would lose its code).
    static func transaction<Result: Sendable>(
        _ connection: PostgresConnection, begin: PostgresQuery, logger: Logger,
        _ work: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await connection.query(begin, logger: logger)
        do {
            let result = try await work(connection)
            try await connection.query("COMMIT", logger: logger)
            return result
        } catch {
            // On a lost connection PostgreSQL has rolled back already, and a query sent on it may
            // never be answered.
            if !PostgresAvailability.isUnavailable(error) {
                _ = try? await connection.query("ROLLBACK", logger: logger)
            }
            throw error
        }
    }
}

extension StoredRecord {
    /// The record in a row's ``StoredRecord/columns``, from column `first` on; nil when
    /// they are NULL (an outer join that found no record).
    init?(_ cells: PostgresRandomAccessRow, from first: Int) throws {
        guard let zoneName = try cells[first].decode(String?.self) else { return nil }
        func cell<Value: PostgresDecodable>(_ offset: Int) throws -> Value {
            try cells[first + offset].decode(Value.self)
        }
        self.init(
            key: RecordKey(zoneName: zoneName, recordName: try cell(1)), recordType: try cell(2),
            fields: try cell(3), changeTag: try cell(4), createdAt: try cell(5), creator: try cell(6),
            modifiedAt: try cell(7), modifier: try cell(8), seq: try cell(9), isDeleted: try cell(10),
            parentName: try cell(11), shareName: try cell(12), shareRoot: try cell(13))
    }
}

extension [PostgresRow] {
    /// Every row's columns, decoded.
    func decode<each Column: PostgresDecodable>(_ columns: (repeat each Column).Type) throws -> [(repeat each Column)] {
        try map { try $0.decode(columns) }
    }
}
