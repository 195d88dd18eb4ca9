import ContactsModel
import Foundation
import GRDBSQLite

/// `contactName(json)`, the SQL function the list reads a contact's name with: the name as the stored row
/// holds it, read in place (formats 3 to 5 keep it right after the ID), so the table keeps no column of
/// names beside it (19 bytes a contact). A row in an older format is decoded; a damaged one gives ''.
enum StoredContactName {
    static let sqlName = "contactName"

    /// Defines the function on one of the store's connections.
    static func register(_ connection: OpaquePointer) {
        sqlite3_create_function_v2(
            connection, sqlName, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, _, values in
                guard let values, let value = values[0], let bytes = sqlite3_value_blob(value) else {
                    sqlite3_result_text(context, "", 0, nil)
                    return
                }
                let row = UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value)))
                if let name = StoredContactName.name(inRow: row) {
                    sqlite3_result_text(context, name.baseAddress, Int32(name.count), StoredContactName.transient)
                } else {
                    let name = (try? ContactFormat.decode(Data(row)))?.name ?? ""
                    sqlite3_result_text(context, name, -1, StoredContactName.transient)
                }
            }, nil, nil, nil)
    }

    /// The name's bytes in a row of format 3, 4 or 5; nil for a row in another format, or damaged.
    static func name(inRow row: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var reader = StoredBytesReader(bytes: row, offset: 17)
        switch row.first {
        case let form where CompactContactForm.isCompact(form): return try? reader.varintSlice()
        case ContactFormat.binary: return try? reader.slice()
        default: return nil
        }
    }

    /// SQLite copies the result (the row's bytes are not the caller's to keep).
    fileprivate static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
