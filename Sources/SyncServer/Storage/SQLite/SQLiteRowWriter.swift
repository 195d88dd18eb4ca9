import Foundation
import GRDB
import GRDBSQLite

/// Runs one prepared insert per row, its values bound with SQLite's own calls.
///
/// Through GRDB's `StatementArguments`, each of a record row's sixteen values was boxed as an
/// existential in an array, then unboxed to be bound: about a tenth of the writer's time in an upload, on the
/// one writer every account's saves wait for. The statement is GRDB's cached one, stepped inside
/// GRDB's transaction.
struct SQLiteRowWriter {
    private let statement: Statement
    private var index: Int32 = 0

    init(_ statement: Statement) {
        self.statement = statement
    }

    mutating func text(_ value: String) throws {
        var value = value
        try bind { handle, index in
            value.withUTF8 { utf8 in
                // An empty string may have no storage to point at, and a null pointer would bind NULL.
                guard let start = utf8.baseAddress else {
                    return sqlite3_bind_text(handle, index, "", 0, Self.transient)
                }
                return sqlite3_bind_text(
                    handle, index, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self), Int32(utf8.count),
                    Self.transient)
            }
        }
    }

    mutating func text(_ value: String?) throws {
        guard let value else { return try bind { sqlite3_bind_null($0, $1) } }
        try text(value)
    }

    mutating func integer(_ value: Int64) throws {
        try bind { sqlite3_bind_int64($0, $1, value) }
    }

    mutating func blob(_ value: Data) throws {
        try bind { handle, index in
            value.withUnsafeBytes { bytes in
                // A zero-length blob, not NULL, for empty bytes (a tombstone's fields).
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite3_bind_zeroblob(handle, index, 0)
                }
                return sqlite3_bind_blob(handle, index, base, Int32(bytes.count), Self.transient)
            }
        }
    }

    /// Runs the statement with the values bound, then makes it ready for the next row.
    mutating func step() throws {
        let handle = statement.sqliteStatement
        index = 0
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else { throw error(code) }
    }

    private mutating func bind(_ call: (OpaquePointer, Int32) -> Int32) throws {
        index += 1
        let code = call(statement.sqliteStatement, index)
        guard code == SQLITE_OK else { throw error(code) }
    }

    private func error(_ code: Int32) -> DatabaseError {
        let message = sqlite3_db_handle(statement.sqliteStatement).flatMap { sqlite3_errmsg($0) }.map {
            String(cString: $0)
        }
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
    }

    /// SQLite copies what it is given before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
