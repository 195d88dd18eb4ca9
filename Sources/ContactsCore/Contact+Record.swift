import Foundation
import SyncCore

extension Contact {
    /// Contacts live in one zone of the private database.
    public static let zoneID = RecordZone.ID(zoneName: "Contacts")
    public static let recordType = "Contact"

    public var recordID: RecordValue.ID { RecordValue.ID(recordName: id.uuidString, zoneID: Self.zoneID) }

    /// Writes the contact's fields into `record` (a last known server record keeps its change tag).
    public func write(to record: inout RecordValue) {
        record["name"] = .string(name)
        record["emails"] = .string(Self.encodeJSON(emails))
        record["phones"] = .string(Self.encodeJSON(phones))
        record["organization"] = .string(organization)
        record["address"] = .string(Self.encodeJSON(address))
        record["notes"] = .string(notes)
        record["extras"] = .string(Self.encodeJSON(extras))
        for field in Field.allCases {
            record[field.rawValue + "Modified"] = .date(modificationDate(of: field))
        }
    }

    /// A record to save: `base` (the last known server record) with this contact's values.
    public func record(base: RecordValue?) -> RecordValue {
        var record = base ?? RecordValue(recordType: Self.recordType, recordID: recordID)
        write(to: &record)
        return record
    }

    /// Reads a contact from a server record; throws when the record is not a contact.
    public init(record: RecordValue) throws {
        guard record.recordType == Self.recordType, let id = UUID(uuidString: record.recordID.recordName) else {
            throw ContactError.notAContact(record.recordID.recordName)
        }
        self.init(id: id, name: record["name"]?.stringValue ?? "")
        emails = Self.decodeJSON(record["emails"]) ?? []
        phones = Self.decodeJSON(record["phones"]) ?? []
        organization = record["organization"]?.stringValue ?? ""
        address = Self.decodeJSON(record["address"]) ?? PostalAddress()
        notes = record["notes"]?.stringValue ?? ""
        extras = Self.decodeJSON(record["extras"]) ?? []
        for field in Field.allCases {
            modified[field] = record[field.rawValue + "Modified"]?.dateValue ?? .distantPast
        }
    }

    private static func encodeJSON(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return String(decoding: (try? encoder.encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }

    private static func decodeJSON<T: Decodable>(_ value: FieldValue?) -> T? {
        guard let text = value?.stringValue else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return try? decoder.decode(T.self, from: Data(text.utf8))
    }
}
