import Logging
import PostgresNIO
import SyncServer

/// A PostgreSQL database as an earlier release left it, for upgrade tests: the migrations up to
/// `version` applied and recorded as that release applied them, then `rows` inserted.
enum PostgresEarlierSchema {
    static func make(url: String, version: Int, rows: [String], logger: Logger) async throws {
        try await PostgresSchema.prepareEarlierSchema(url: url, version: version, logger: logger) { connection in
            for statement in rows {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
    }
}
