import Logging
import PostgresNIO

@testable import SyncServer

/// A PostgreSQL database as an earlier release left it, for upgrade tests: the migrations up to
/// `version` applied and recorded as that release applied them, then `rows` inserted.
enum PostgresEarlierSchema {
    static func make(url: String, version: Int, rows: [String], logger: Logger) async throws {
        let client = PostgresClient(
            configuration: try PostgresRecordStore.configuration(url: url), backgroundLogger: logger)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await client.run() }
            try await client.withConnection { connection in
                try await connection.query(
                    """
                    CREATE TABLE schema_migration (
                        version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                    )
                    """, logger: logger)
                for migration in PostgresSchema.migrations where migration.version <= version {
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query(
                        "INSERT INTO schema_migration (version, name) VALUES (\(migration.version), \(migration.name))",
                        logger: logger)
                }
                for statement in rows {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            group.cancelAll()
        }
    }
}
