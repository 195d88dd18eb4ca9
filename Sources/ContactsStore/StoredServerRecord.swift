import Foundation
import SyncCore

/// A last known server record as the store keeps it in `serverRecord.json` (the column's name stays from
/// the first form): the record's system fields and its values, the encrypted ones in plaintext (the wire
/// leaves them out; this device's file holds its contacts in plaintext anyway). The contact itself is not
/// in it: the row shares the contact's row, or keeps its own copy in `serverRecord.contact`.
///
/// Written now, compact: a form byte (``compact``), a byte of flags saying which of the optional parts
/// follow, then the parts in ``StoredBytesWriter``'s encoding: the record's name (only when it is not the
/// row's), its zone's name and owner (left out when the owner is the default), its type, change tag, dates
/// (milliseconds since 1970, as the wire has them), creator and last modifier (left out when the same as the
/// creator), then the plain and the encrypted values, each as the wire's JSON of a field dictionary (empty
/// for none). A contact's record takes about 140 bytes where JSON took 450.
///
/// A record with parts the compact form leaves out (a parent, a share, keys marked changed) is kept as
/// JSON, the form every version before wrote, which is read as it was.
enum StoredServerRecord {
    /// The first byte of the compact form; JSON starts with `{`.
    static let compact: UInt8 = 1

    fileprivate struct Parts: OptionSet {
        let rawValue: UInt8
        static let otherName = Parts(rawValue: 1 << 0)
        static let otherOwner = Parts(rawValue: 1 << 1)
        static let changeTag = Parts(rawValue: 1 << 2)
        static let creationDate = Parts(rawValue: 1 << 3)
        static let modificationDate = Parts(rawValue: 1 << 4)
        static let creator = Parts(rawValue: 1 << 5)
        static let modifier = Parts(rawValue: 1 << 6)
        static let modifierIsCreator = Parts(rawValue: 1 << 7)
    }

    /// `record`, kept in the row named `name`.
    static func encode(_ record: RecordValue, name: String) -> Data {
        guard record.parent == nil, record.share == nil, record.changedKeys.isEmpty else { return json(record) }
        let zone = record.recordID.zoneID
        let creator = record.creatorUserRecordID?.recordName
        let modifier = record.lastModifiedUserRecordID?.recordName
        var parts: Parts = []
        if record.recordID.recordName != name { parts.insert(.otherName) }
        if zone.ownerName != RecordZone.ID.defaultOwnerName { parts.insert(.otherOwner) }
        if record.recordChangeTag != nil { parts.insert(.changeTag) }
        if record.creationDate != nil { parts.insert(.creationDate) }
        if record.modificationDate != nil { parts.insert(.modificationDate) }
        if creator != nil { parts.insert(.creator) }
        if modifier != nil { parts.insert(modifier == creator ? .modifierIsCreator : .modifier) }

        var writer = StoredBytesWriter(capacity: 192)
        writer.byte(compact)
        writer.byte(parts.rawValue)
        if parts.contains(.otherName) { writer.string(record.recordID.recordName) }
        writer.string(zone.zoneName)
        if parts.contains(.otherOwner) { writer.string(zone.ownerName) }
        writer.string(record.recordType)
        if let tag = record.recordChangeTag { writer.string(tag) }
        if let date = record.creationDate { writer.int64(date.millisecondsSince1970) }
        if let date = record.modificationDate { writer.int64(date.millisecondsSince1970) }
        if let creator { writer.string(creator) }
        if parts.contains(.modifier), let modifier { writer.string(modifier) }
        writer.byteString(fieldsJSON(record.fields))
        writer.byteString(fieldsJSON(record.encryptedValues))
        return writer.data
    }

    /// The record kept in the row named `name`, in either form; nil for bytes that are neither.
    static func decode(_ data: Data, name: String) -> RecordValue? {
        guard data.first == compact else { return decodeJSON(data) }
        return data.withUnsafeBytes { raw in
            var reader = StoredBytesReader(bytes: raw, offset: 1)
            return try? reader.serverRecord(name: name)
        }
    }

    private static func fieldsJSON(_ fields: [String: FieldValue]) -> [UInt8] {
        guard !fields.isEmpty else { return [] }
        var writer = JSONWriter(capacity: 128)
        writer.fields(fields)
        return writer.bytes
    }

    fileprivate static func fields(_ json: Data) throws -> [String: FieldValue] {
        json.isEmpty ? [:] : try JSONReader.decode([String: FieldValue].self, from: json)
    }

    // MARK: JSON, as versions before the compact form wrote

    /// The JSON form: the record and, apart, its encrypted values.
    private static func json(_ record: RecordValue) -> Data {
        var writer = JSONWriter(capacity: 1024)
        writer.raw("{\"record\":")
        writer.record(record)
        writer.raw(",\"encryptedValues\":")
        writer.fields(record.encryptedValues)
        writer.raw("}")
        return Data(writer.bytes)
    }

    private struct JSONForm: Decodable {
        var record: RecordValue
        var encryptedValues: [String: FieldValue]
    }

    /// The record, from the JSON form or from the bare record that versions before encryption stored.
    private static func decodeJSON(_ data: Data) -> RecordValue? {
        if let stored = try? JSONReader.decode(JSONForm.self, from: data) {
            var record = stored.record
            for (key, value) in stored.encryptedValues { record.replaceWithoutChange(encrypted: key, by: value) }
            return record
        }
        return try? JSONReader.decode(RecordValue.self, from: data)
    }
}

extension StoredBytesReader {
    fileprivate mutating func serverRecord(name: String) throws -> RecordValue {
        let parts = StoredServerRecord.Parts(rawValue: try byte())
        let recordName = parts.contains(.otherName) ? try string() : name
        let zoneName = try string()
        let owner = parts.contains(.otherOwner) ? try string() : RecordZone.ID.defaultOwnerName
        let recordType = try string()
        let changeTag = parts.contains(.changeTag) ? try string() : nil
        let creationDate = parts.contains(.creationDate) ? try date(milliseconds: int64()) : nil
        let modificationDate = parts.contains(.modificationDate) ? try date(milliseconds: int64()) : nil
        let creator = parts.contains(.creator) ? try string() : nil
        let modifier =
            parts.contains(.modifier) ? try string() : parts.contains(.modifierIsCreator) ? creator : nil
        var record = RecordValue(
            recordID: RecordValue.ID(
                recordName: recordName, zoneID: RecordZone.ID(zoneName: zoneName, ownerName: owner)),
            recordType: recordType, fields: try StoredServerRecord.fields(byteString()), recordChangeTag: changeTag,
            creationDate: creationDate, modificationDate: modificationDate,
            creatorUserRecordID: creator.map(RecordValue.ID.init(userRecordName:)),
            lastModifiedUserRecordID: modifier.map(RecordValue.ID.init(userRecordName:)))
        for (key, value) in try StoredServerRecord.fields(byteString()) {
            record.replaceWithoutChange(encrypted: key, by: value)
        }
        guard isAtEnd else { throw damaged() }
        return record
    }

    private func date(milliseconds: Int64) throws -> Date {
        guard let date = Date(checkedMillisecondsSince1970: milliseconds) else { throw damaged() }
        return date
    }
}
