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
        put("emails", .string(Self.encodeJSON(emails)))
        put("phones", .string(Self.encodeJSON(phones)))
        put("organization", .string(organization))
        put("address", .string(Self.encodeJSON(address)))
        put("notes", .string(notes))
        put("extras", .string(Self.encodeJSON(extras)))
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
        emails = Self.decodeJSON(value("emails")) ?? []
        phones = Self.decodeJSON(value("phones")) ?? []
        organization = value("organization")?.stringValue ?? ""
        address = Self.decodeJSON(value("address")) ?? PostalAddress()
        notes = value("notes")?.stringValue ?? ""
        extras = Self.decodeJSON(value("extras")) ?? []
        for field in Field.allCases {
            modified[field] = value(field.rawValue + "Modified")?.dateValue ?? .distantPast
        }
    }

    /// Whether the record keeps any contact field in plain, as versions before encryption wrote them.
    public static func hasPlainFields(_ record: RecordValue) -> Bool {
        !record.fields.isEmpty
    }

    private static func encodeJSON(_ value: some Encodable) -> String {
        String(decoding: (try? fieldEncoder.encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }

    private static func decodeJSON<T: Decodable>(_ value: FieldValue?) -> T? {
        guard let text = value?.stringValue else { return nil }
        return try? fieldDecoder.decode(T.self, from: Data(text.utf8))
    }

    /// Made once: making a JSONEncoder or JSONDecoder costs more than using it on a small value.
    private static let fieldEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return encoder
    }()

    private static let fieldDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }()
}
