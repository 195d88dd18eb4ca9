import ContactsModel
import Foundation
import GRDB

/// How the store keeps a record's name in its key columns (`contact.id`, `serverRecord.id`, the change log's
/// `contactChange.id` and `resourceName.id`): a name that is a UUID's canonical text (every contact's) as the
/// UUID's 16 bytes, any other name (a book record's) as its text. 20 bytes a key less than the text, in three
/// keys a contact (60 MB in a million contacts' file); blobs sort as their hex text does, so the list's order
/// of equal sort keys is unchanged.
enum RecordKey {
    /// A contact's key.
    static func key(_ id: UUID) -> DatabaseValue { id.databaseValue }

    /// The key of the record named `name`: only the canonical text itself (upper case) becomes bytes, so
    /// that ``name(_:)`` gives back the very name.
    static func key(named name: String) -> DatabaseValue {
        var name = name
        let uuid = name.withUTF8 { UUID(canonicalText: UnsafeRawBufferPointer($0)) }
        return uuid?.databaseValue ?? name.databaseValue
    }

    /// The record name a key column holds; nil for anything else.
    static func name(_ key: DatabaseValue) -> String? {
        switch key.storage {
        case .blob: UUID.fromDatabaseValue(key)?.canonicalString
        case .string(let name): name
        default: nil
        }
    }

    /// The contact a key column holds (its 16 bytes, or its text as versions before 0.4 kept it).
    static func id(_ key: DatabaseValue) -> UUID? {
        switch key.storage {
        case .blob: UUID.fromDatabaseValue(key)
        case .string(let name): UUID(canonical: name)
        default: nil
        }
    }

    /// `recordKey(text)` for the migration that turns keys into bytes: the key of a name (``key(named:)``), and
    /// any other value as it is.
    static let function = DatabaseFunction("recordKey", argumentCount: 1, pure: true) { values in
        guard let name = String.fromDatabaseValue(values[0]) else { return values[0] }
        return key(named: name)
    }
}
