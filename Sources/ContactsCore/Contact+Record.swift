import Foundation
import SyncCore

extension Contact {
    /// Contacts live in one zone of the private database.
    public static let zoneID = RecordZone.ID(zoneName: "Contacts")
    public static let recordType = "Contact"

    public var recordID: RecordValue.ID { RecordValue.ID(recordName: id.uuidString, zoneID: Self.zoneID) }

    /// Writes the contact's fields into `record` (a last known server record keeps its change tag). Every
    /// field, the edit times too, goes in `encryptedValues`: the server stores only ciphertext. A plain
    /// value written by an earlier version is replaced.
    public func write(to record: inout RecordValue) {
        func put(_ key: String, _ value: FieldValue) {
            record.replaceWithoutChange(field: key, by: nil)
            record[encrypted: key] = value
        }
        put("name", .string(name))
        put("emails", .string(RecordJSON.encode(emails)))
        put("phones", .string(RecordJSON.encode(phones)))
        put("organization", .string(organization))
        put("address", .string(RecordJSON.encode(address)))
        put("notes", .string(notes))
        put("extras", .string(RecordJSON.encode(extras)))
        for field in Field.allCases {
            put(field.rawValue + "Modified", .date(modificationDate(of: field)))
        }
    }

    /// A record to save: `base` (the last known server record) with this contact's values.
    public func record(base: RecordValue?) -> RecordValue {
        var record = base ?? RecordValue(recordType: Self.recordType, recordID: recordID)
        write(to: &record)
        return record
    }

    /// Reads a contact from a server record; throws when the record is not a contact. Values written
    /// in plain by earlier versions are read too.
    public init(record: RecordValue) throws {
        guard record.recordType == Self.recordType, let id = UUID(uuidString: record.recordID.recordName) else {
            throw ContactError.notAContact(record.recordID.recordName)
        }
        func value(_ key: String) -> FieldValue? { record[encrypted: key] ?? record[key] }
        self.init(id: id, name: value("name")?.stringValue ?? "")
        emails = RecordJSON.items(value("emails")) ?? []
        phones = RecordJSON.items(value("phones")) ?? []
        organization = value("organization")?.stringValue ?? ""
        address = RecordJSON.address(value("address")) ?? PostalAddress()
        notes = value("notes")?.stringValue ?? ""
        extras = RecordJSON.strings(value("extras")) ?? []
        for field in Field.allCases {
            modified[field] = value(field.rawValue + "Modified")?.dateValue ?? .distantPast
        }
    }

    /// Whether the record keeps any contact field in plain, as versions before encryption wrote them.
    public static func hasPlainFields(_ record: RecordValue) -> Bool {
        !record.fields.isEmpty
    }
}
