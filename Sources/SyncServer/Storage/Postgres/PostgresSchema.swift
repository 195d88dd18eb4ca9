import Logging
import PostgresNIO

/// The PostgreSQL schema: ``SchemaHistory``'s versions, applied in order.
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
        /// What the version fills in with Swift, after its statements (``SchemaHistory/Version/fill``).
        var fill: (@Sendable (any StoreTransaction) async throws -> Void)?
    }

    /// The newest schema version this server knows.
    static var currentVersion: Int { migrations.last!.version }

    /// The advisory lock that migrations hold (any 64-bit number no other program of the database uses).
    private static let migrationLock: Int64 = 0x5359_4E43_5343_4845  // "SYNCSCHE"

    /// The schema's history (``SchemaHistory``) as PostgreSQL's migrations.
    static let migrations: [Migration] = SchemaHistory.versions.map {
        Migration(version: $0.number, name: $0.name, statements: $0.postgres, fill: $0.fill)
    }

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
            configuration: try await PostgresRecordStore.configuration(url: url, logger: logger),
            backgroundLogger: logger)
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
                if let fill = migration.fill {
                    try await fill(PostgresTransaction(connection: connection, logger: logger))
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
