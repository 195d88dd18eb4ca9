import Foundation
import GRDB
import Logging
import PostgresNIO
import SyncTesting
import Testing

@testable import SyncServer

/// Storage as an earlier server left it, on either backend, for the upgrade tests: a version of
/// ``SchemaHistory`` (the same number on both) holding rows written in that backend's dialect.
enum EarlierSchema {
    /// The SQL of rows in one backend's dialect.
    struct Dialect {
        let postgres: Bool

        var yes: String { postgres ? "TRUE" : "1" }
        var no: String { postgres ? "FALSE" : "0" }

        /// A BLOB (BYTEA) literal.
        func blob(_ bytes: [UInt8]) -> String {
            let hex = bytes.map { String(format: "%02x", $0) }.joined()
            return postgres ? "'\\x\(hex)'::bytea" : "X'\(hex)'"
        }

        func blob(_ text: String) -> String { blob(Array(text.utf8)) }

        /// An account's row (PostgreSQL keeps the folded username beside it), with its change counter
        /// when given.
        func account(_ id: String, _ username: String, changeSeq: Int? = nil) -> String {
            let folded = postgres ? ", username_folded" : ""
            let foldedValue = postgres ? ", '\(username.lowercased())'" : ""
            let seq = changeSeq.map { (", change_seq", ", \($0)") } ?? ("", "")
            return """
                INSERT INTO account (user_record_name, username\(folded), password_hash, created_at\(seq.0))
                VALUES ('\(id)', '\(username)'\(foldedValue), 'x', 0\(seq.1))
                """
        }
    }

    /// A SQLite file at schema `version` holding `rows` (`dialect` is SQLite's); its path, removed with its
    /// log after `body`.
    static func withSQLite<Result>(
        at version: Int, rows: (Dialect) -> [String], _ body: (String) async throws -> Result
    ) async throws -> Result {
        let path = TemporaryFiles.path("upgrade", extension: "sqlite")
        defer { TemporaryFiles.removeSQLite(path) }
        do {
            let steps = try #require(SchemaHistory.versions.first { $0.number == version }).sqlite
            let earlier = try DatabaseQueue(path: path)
            try SQLiteRecordStore.migrator.migrate(earlier, upTo: steps.last!.identifier)
            let statements = rows(Dialect(postgres: false))
            try await earlier.write { db in
                for statement in statements { try db.execute(sql: statement) }
            }
        }
        return try await body(path)
    }

    /// Brings the empty database at `url` to schema `version` and writes `rows` into it.
    static func preparePostgres(url: String, at version: Int, rows: (Dialect) -> [String]) async throws {
        let logger = Logger(label: "upgrade-test")
        let statements = rows(Dialect(postgres: true))
        try await PostgresSchema.prepareEarlierSchema(url: url, version: version, logger: logger) { connection in
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
    }

    /// A database of the test PostgreSQL at schema `version` holding `rows`; its URL, the database dropped
    /// after `body`. `name` names it (made unique).
    static func withPostgres<Result>(
        named name: String, at version: Int, rows: (Dialect) -> [String], _ body: (String) async throws -> Result
    ) async throws -> Result {
        let database = TestPostgres.databaseName(for: "\(name)-\(UUID())")
        try await TestPostgres.createDatabase(database)
        do {
            let url = try TestPostgres.url(database: database)
            try await preparePostgres(url: url, at: version, rows: rows)
            let result = try await body(url)
            try await TestPostgres.dropDatabase(database)
            return result
        } catch {
            try? await TestPostgres.dropDatabase(database)
            throw error
        }
    }
}
