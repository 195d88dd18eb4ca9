import Foundation
import GRDB
import Logging
import PostgresNIO
import SyncServer

/// A server's SQLite file, as an earlier release wrote it, copied into a PostgreSQL database at that
/// release's schema: the same accounts, sessions, zones, records and shares on the other backend, for
/// upgrade tests that need real ciphertext and tokens on both.
enum SQLiteFixtureInPostgres {
    /// Applies the PostgreSQL migrations up to `version` to the (empty) database at `url`, recorded as that
    /// release recorded them, then copies every row of every table both have (the columns both have;
    /// `account.username_folded`, which only PostgreSQL keeps, from the username).
    static func copy(sqlite path: String, toPostgres url: String, version: Int, logger: Logger) async throws {
        let source = try DatabaseQueue(path: path)
        let tables = try await source.read { db in
            try String.fetchAll(
                db,
                sql:
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'grdb_migrations'"
            )
        }
        try await PostgresSchema.prepareEarlierSchema(url: url, version: version, logger: logger) { connection in
            for table in tables {
                var types: [String: String] = [:]
                for try await (column, type) in try await connection.query(
                    "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = \(table)",
                    logger: logger
                ).decode((String, String).self) {
                    types[column] = type
                }
                guard !types.isEmpty else { continue }
                let rows = try await source.read { db in try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"") }
                for row in rows {
                    var columns: [String] = []
                    var values: [String] = []
                    for column in row.columnNames where types[column] != nil {
                        columns.append(column)
                        values.append(literal(row[column] as DatabaseValue, type: types[column] ?? "text"))
                    }
                    if table == "account", types["username_folded"] != nil, let name: String = row["username"] {
                        columns.append("username_folded")
                        values.append(literal(name.lowercased().databaseValue, type: "text"))
                    }
                    let sql =
                        "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))"
                    try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                }
            }
        }
    }

    /// `value` as a PostgreSQL literal of `type`.
    private static func literal(_ value: DatabaseValue, type: String) -> String {
        switch value.storage {
        case .null: return "NULL"
        case .int64(let number): return type == "boolean" ? (number != 0 ? "TRUE" : "FALSE") : String(number)
        case .double(let number): return String(number)
        case .string(let text): return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data):
            return "'\\x" + data.map { String(format: "%02x", $0) }.joined() + "'::bytea"
        }
    }
}
