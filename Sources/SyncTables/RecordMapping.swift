import Crypto
import Foundation
import GRDB
import SyncClient
import SyncCore

/// The values of a row's record as the server last returned it, kept in `synctables_metadata.serverFields`:
/// every field, including those of columns this version of the app does not have (sent back unchanged
/// with the row's next save, so that an older version never drops a newer one's column), and the
/// digest of each BLOB column's bytes (an asset's bytes live apart from its record).
struct ServerFields: Codable, Sendable, Equatable {
    var plain: [String: FieldValue] = [:]
    var encrypted: [String: FieldValue] = [:]
    var blobDigests: [String: String] = [:]

    subscript(column: String) -> FieldValue? { plain[column] ?? encrypted[column] }

    init() {}

    init(_ record: RecordValue) {
        plain = record.fields
        encrypted = record.encryptedValues
    }
}

/// A row's values by column, as GRDB reads them.
typealias RowValues = [String: DatabaseValue]

/// Rows to records and back, for one table.
struct RecordMapping: Sendable {
    let schema: TableSchema

    /// The value of `column` in a record, or nil for NULL (a field left out). An asset's bytes are not
    /// read here (see ``TableSync``'s send): BLOBs come back as `.bytes`.
    func field(_ column: String, _ value: DatabaseValue, zoneID: RecordZone.ID) -> FieldValue? {
        switch value.storage {
        case .null: return nil
        case .int64(let number): return .int64(number)
        case .double(let number): return .double(number)
        case .string(let text):
            if let reference = schema.reference(for: column) {
                return .reference(
                    RecordValue.Reference(
                        recordID: .init(recordName: text, zoneID: zoneID),
                        action: reference.cascades ? .deleteSelf : .none))
            }
            return .string(text)
        case .blob(let data): return .bytes(data)
        }
    }

    /// The database value of a field that is not an asset (assets are downloaded by the caller).
    static func databaseValue(_ field: FieldValue?) -> DatabaseValue {
        guard let field else { return .null }
        switch field {
        case .string(let text): return text.databaseValue
        case .int64(let number): return number.databaseValue
        case .double(let number): return number.databaseValue
        case .date(let date): return date.databaseValue
        case .bytes(let data): return data.databaseValue
        case .reference(let reference): return reference.recordID.recordName.databaseValue
        case .list(let elements):
            let json = (try? JSONEncoder().encode(elements)).flatMap { String(data: $0, encoding: .utf8) }
            return json?.databaseValue ?? .null
        case .asset, .encrypted: return .null
        }
    }

    /// The row the server's fields describe, its assets as their digests (their bytes are not on this
    /// device): a conflict's ancestor.
    func row(_ fields: ServerFields, key: String) -> RowValues {
        var row: RowValues = [schema.primaryKey: key.databaseValue]
        for column in schema.valueColumns {
            if case .asset = fields[column] {
                row[column] = fields.blobDigests[column].map { "blob:\($0)".databaseValue } ?? .null
            } else {
                row[column] = Self.databaseValue(fields[column])
            }
        }
        return row
    }

    /// The row a fetched record's fields make, its assets from their downloaded bytes (with the digests the
    /// metadata keeps), and the first asset column whose bytes did not arrive, if one did not (left out of
    /// the row). A field the record lacks for a `NOT NULL` column is left out too: its sender does not have
    /// the column, and the row keeps its default, or what it holds.
    func row(_ fields: ServerFields, key: String, downloaded: [String: Data]) -> (
        values: RowValues, digests: [String: String], missingAsset: String?
    ) {
        var values: RowValues = [schema.primaryKey: key.databaseValue]
        var digests: [String: String] = [:]
        var missing: String?
        for column in schema.valueColumns {
            let field = fields[column]
            if case .asset = field {
                guard let bytes = downloaded[column] else {
                    missing = missing ?? column
                    continue
                }
                values[column] = bytes.databaseValue
                digests[column] = Self.digest(bytes)
            } else if field == nil, schema.notNullColumns.contains(column) {
                continue
            } else {
                values[column] = Self.databaseValue(field)
            }
        }
        return (values, digests, missing)
    }

    /// The row the server's fields describe, for comparing (BLOBs as their digests).
    func comparable(_ fields: ServerFields) -> RowValues {
        Self.comparable(row(fields, key: ""))
    }

    /// A row's values for comparing: BLOBs as their digests.
    static func comparable(_ row: RowValues) -> RowValues { row.mapValues(comparable) }

    static func comparable(_ value: DatabaseValue) -> DatabaseValue {
        if case .blob(let data) = value.storage { return "blob:\(digest(data))".databaseValue }
        return value
    }

    /// Whether a record names an asset, in a plain or an encrypted value.
    static func namesAsset(_ record: RecordValue) -> Bool {
        record.fields.values.contains(where: \.namesAsset)
            || record.encryptedValues.values.contains(where: \.namesAsset)
    }

    static func digest(_ data: Data) -> String { Hexadecimal.lowercase(SHA256.hash(data: data)) }
}
