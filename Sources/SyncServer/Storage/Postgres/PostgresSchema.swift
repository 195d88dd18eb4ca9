import Logging
import PostgresNIO

/// The PostgreSQL schema, as numbered migrations applied in order.
///
/// Each server that starts takes a transaction-scoped advisory lock before it looks, so of several
/// instances starting at once one migrates and the others find the work done. A database whose schema
/// is newer than this server knows is refused: an older server would misread what a newer one wrote.
package enum PostgresSchema {
    /// One migration: statements run in one transaction, in order.
    struct Migration {
        var version: Int
        var name: String
        var statements: [String]
    }

    /// The newest schema version this server knows.
    static var currentVersion: Int { migrations.last!.version }

    /// The advisory lock that migrations hold (any 64-bit number no other program of the database uses).
    private static let migrationLock: Int64 = 0x5359_4E43_5343_4845  // "SYNCSCHE"

    static let migrations: [Migration] = [
        Migration(
            version: 1, name: "accounts, sessions, zones, records, replay answers, encryption settings",
            statements: [
                // `username_folded` is the username with ASCII letters lowercased, the way SQLite's NOCASE
                // compares: both backends then agree on which usernames are taken.
                """
                CREATE TABLE account (
                    user_record_name TEXT PRIMARY KEY,
                    username TEXT NOT NULL,
                    username_folded TEXT NOT NULL UNIQUE,
                    password_hash TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    change_seq BIGINT NOT NULL DEFAULT 0,
                    compacted_seq BIGINT NOT NULL DEFAULT 0
                )
                """,
                """
                CREATE TABLE session (
                    token_hash TEXT PRIMARY KEY,
                    user_record_name TEXT NOT NULL REFERENCES account(user_record_name) ON DELETE CASCADE,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE zone (
                    owner TEXT NOT NULL,
                    zone_name TEXT NOT NULL,
                    incarnation TEXT NOT NULL,
                    change_seq BIGINT NOT NULL,
                    deleted BOOLEAN NOT NULL DEFAULT FALSE,
                    deletion_reason TEXT,
                    modified_at BIGINT NOT NULL,
                    key_version BIGINT,
                    wrapped_key BYTEA,
                    PRIMARY KEY (owner, zone_name)
                )
                """,
                "CREATE INDEX zone_by_change ON zone(owner, change_seq)",
                """
                CREATE TABLE record (
                    owner TEXT NOT NULL,
                    zone_name TEXT NOT NULL,
                    record_name TEXT NOT NULL,
                    record_type TEXT NOT NULL,
                    fields BYTEA NOT NULL,
                    change_tag TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    creator TEXT NOT NULL,
                    modified_at BIGINT NOT NULL,
                    modifier TEXT NOT NULL,
                    seq BIGINT NOT NULL,
                    deleted BOOLEAN NOT NULL,
                    PRIMARY KEY (owner, zone_name, record_name)
                )
                """,
                "CREATE INDEX record_by_change ON record(owner, zone_name, seq)",
                """
                CREATE TABLE client_request (
                    owner TEXT NOT NULL,
                    request_id TEXT NOT NULL,
                    body_hash BYTEA NOT NULL,
                    response BYTEA NOT NULL,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (owner, request_id)
                )
                """,
                """
                CREATE TABLE encryption_settings (
                    user_record_name TEXT PRIMARY KEY REFERENCES account(user_record_name) ON DELETE CASCADE,
                    salt BYTEA NOT NULL,
                    cost_n BIGINT NOT NULL,
                    block_size_r BIGINT NOT NULL,
                    parallelism_p BIGINT NOT NULL,
                    key_version BIGINT NOT NULL,
                    verifier BYTEA NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
            ]),
        Migration(
            version: 2, name: "shares",
            statements: [
                """
                CREATE TABLE share (
                    owner TEXT NOT NULL,
                    zone_name TEXT NOT NULL,
                    token TEXT NOT NULL UNIQUE,
                    public_permission TEXT NOT NULL,
                    invitation_key_version BIGINT,
                    invitation_key BYTEA,
                    PRIMARY KEY (owner, zone_name)
                )
                """,
                """
                CREATE TABLE share_participant (
                    owner TEXT NOT NULL,
                    zone_name TEXT NOT NULL,
                    position BIGINT NOT NULL,
                    user_record_name TEXT NOT NULL,
                    username TEXT NOT NULL,
                    role TEXT NOT NULL,
                    permission TEXT NOT NULL,
                    status TEXT NOT NULL,
                    key_version BIGINT,
                    wrapped_key BYTEA,
                    PRIMARY KEY (owner, zone_name, user_record_name)
                )
                """,
                "CREATE INDEX share_participant_by_user ON share_participant(user_record_name, status)",
            ]),
        Migration(
            version: 3, name: "record.writer",
            statements: [
                // Which writer (an engine's X-Writer-ID) saved each version, so that its fetches can
                // leave out what it saved itself. Rows written before have none.
                "ALTER TABLE record ADD COLUMN writer TEXT NOT NULL DEFAULT ''"
            ]),
        Migration(
            version: 4, name: "record hierarchies and record-hierarchy shares",
            statements: [
                // Each record's parent, the share it is the root of, and the root of the shared
                // hierarchy it is in; and a log of records that joined or left a hierarchy.
                """
                ALTER TABLE record ADD COLUMN parent_name TEXT, ADD COLUMN share_name TEXT,
                    ADD COLUMN share_root TEXT
                """,
                """
                CREATE INDEX record_by_parent ON record(owner, zone_name, parent_name)
                    WHERE parent_name IS NOT NULL
                """,
                """
                CREATE INDEX record_by_share_root ON record(owner, zone_name, share_root)
                    WHERE share_root IS NOT NULL
                """,
                """
                CREATE TABLE share_membership (
                    owner TEXT NOT NULL,
                    zone_name TEXT NOT NULL,
                    seq BIGINT NOT NULL,
                    record_name TEXT NOT NULL,
                    record_type TEXT NOT NULL,
                    old_root TEXT,
                    new_root TEXT,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (owner, zone_name, seq)
                )
                """,
                // Shares are named by their record: the zone-wide share by `cloudkit.zoneshare`.
                """
                ALTER TABLE share ADD COLUMN record_name TEXT NOT NULL DEFAULT 'cloudkit.zoneshare',
                    ADD COLUMN root_record_name TEXT
                """,
                "ALTER TABLE share DROP CONSTRAINT share_pkey",
                "ALTER TABLE share ADD PRIMARY KEY (owner, zone_name, record_name)",
                """
                ALTER TABLE share_participant ADD COLUMN share_name TEXT NOT NULL DEFAULT 'cloudkit.zoneshare'
                """,
                "ALTER TABLE share_participant DROP CONSTRAINT share_participant_pkey",
                "ALTER TABLE share_participant ADD PRIMARY KEY (owner, zone_name, share_name, user_record_name)",
            ]),
        PostgresRecordStore.accountLifecycleMigration,
        // Each account's and each zone's usage, counted from what is stored already.
        Migration(version: 6, name: "storage quotas", statements: PostgresRecordStore.quotaMigration),
        Migration(
            version: 7, name: "change-token keys",
            statements: [PostgresRecordStore.changeTokenKeyTable]),
        PostgresRecordStore.keyPairMigration,
        PostgresRecordStore.assetMigration,
    ]

    /// Brings the database's schema up to ``currentVersion``; refuses one that is newer.
    static func migrate(_ client: PostgresClient, logger: Logger) async throws {
        // A database that cannot be reached fails the start within `connectTimeout`, not after the
        // pool has retried for a minute.
        try await PostgresAvailability.leasing(within: connectTimeout) { leased in
            try await client.withConnection { connection in
                leased()
                try await migrate(connection, logger: logger)
            }
        }
    }

    /// How long a starting server tries to reach its database.
    static let connectTimeout: Duration = .seconds(30)

    /// For upgrade tests: brings the (empty) database at `url` to schema `version` exactly as the release of
    /// that version did, then lets `fill` write that release's rows through the same connection.
    package static func prepareEarlierSchema(
        url: String, version: Int, logger: Logger, fill: @Sendable (PostgresConnection) async throws -> Void
    ) async throws {
        let client = PostgresClient(
            configuration: try PostgresRecordStore.configuration(url: url), backgroundLogger: logger)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await client.run() }
            try await client.withConnection { connection in
                try await migrate(connection, upTo: version, logger: logger)
                try await fill(connection)
            }
            group.cancelAll()
        }
    }

    private static func migrate(
        _ connection: PostgresConnection, upTo target: Int = currentVersion, logger: Logger
    ) async throws {
        try await PostgresRecordStore.transaction(connection, begin: "BEGIN", logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS schema_migration (
                    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                )
                """, logger: logger)
            var applied = 0
            for try await version in try await connection.query(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migration", logger: logger
            ).decode(Int.self) {
                applied = version
            }
            guard applied <= currentVersion else {
                throw SchemaError(
                    description: """
                        the database's schema is version \(applied), newer than this sync-server knows \
                        (\(currentVersion)); run the newer sync-server that wrote it, or restore a backup made \
                        before the upgrade
                        """)
            }
            for migration in migrations where migration.version > applied && migration.version <= target {
                logger.notice(
                    "migrating the database",
                    metadata: ["version": "\(migration.version)", "name": "\(migration.name)"]
                )
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO schema_migration (version, name) VALUES (\(migration.version), \(migration.name))",
                    logger: logger)
            }
        }
    }
}

/// A database this server cannot use as it is.
public struct SchemaError: Error, CustomStringConvertible {
    public let description: String
}
