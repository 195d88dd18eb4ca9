import Foundation
import SyncCore

/// A last known server record as the store keeps it in `serverRecord.json` (the column's name stays from
/// the first form): the record's system fields and its values, the encrypted ones in plaintext (the wire
/// leaves them out; this device's file holds its contacts in plaintext anyway). The contact itself is not
/// in it: the row shares the contact's row, or keeps its own copy in `serverRecord.contact`.
///
/// Written now, compact (form 2, ``compact``): a form byte, a byte of flags saying which of the optional
/// parts follow, then the parts: the record's name (only when it is not the row's), its zone's name and owner
/// (left out when the owner is the default), its type, change tag, dates (milliseconds since 1970, as the
/// wire has them, 8 bytes each), creator and last modifier (left out when the same as the creator), each
/// string as a varint byte count and UTF-8; then the plain and the encrypted values, each a byte saying how
/// (``Values``): none, only strings (a varint count, then each key and value), or the wire's JSON of the
/// field dictionary. A contact's record takes about 90 bytes. Form 1 (``compactFirst``), read as it was, had
/// UInt32 counts and always the JSON (about 140 bytes).
///
/// A record with parts the compact form leaves out (a parent, a share, keys marked changed) is kept as
/// JSON, the form every version before the compact forms wrote, which is read as it was.
enum StoredServerRecord {
    /// The first byte of the compact form written now; JSON starts with `{`.
    static let compact: UInt8 = 2
    /// The first byte of the first compact form.
    static let compactFirst: UInt8 = 1

    /// How form 2 keeps a dictionary of values.
    fileprivate enum Values: UInt8 {
        case empty = 0
        case strings = 1
        case json = 2
    }

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

        var writer = StoredBytesWriter(capacity: 128)
        writer.byte(compact)
        writer.byte(parts.rawValue)
        if parts.contains(.otherName) { writer.varintString(record.recordID.recordName) }
        writer.varintString(zone.zoneName)
        if parts.contains(.otherOwner) { writer.varintString(zone.ownerName) }
        writer.varintString(record.recordType)
        if let tag = record.recordChangeTag { writer.varintString(tag) }
        if let date = record.creationDate { writer.int64(date.millisecondsSince1970) }
        if let date = record.modificationDate { writer.int64(date.millisecondsSince1970) }
        if let creator { writer.varintString(creator) }
        if parts.contains(.modifier), let modifier { writer.varintString(modifier) }
        values(record.fields, &writer)
        values(record.encryptedValues, &writer)
        return writer.data
    }

    /// A dictionary of values in form 2: strings alone as strings, anything else as the wire's JSON.
    private static func values(_ fields: [String: FieldValue], _ writer: inout StoredBytesWriter) {
        guard !fields.isEmpty else { return writer.byte(Values.empty.rawValue) }
        guard fields.values.allSatisfy({ $0.stringValue != nil }) else {
            writer.byte(Values.json.rawValue)
            return writer.varintString(fieldsJSON(fields))
        }
        writer.byte(Values.strings.rawValue)
        writer.varint(fields.count)
        for (key, value) in fields {
            writer.varintString(key)
            writer.varintString(value.stringValue ?? "")
        }
    }

    /// The record kept in the row named `name`, in either form; nil for bytes that are neither.
    static func decode(_ data: Data, name: String) -> RecordValue? {
        guard let form = data.first, form == compact || form == compactFirst else { return decodeJSON(data) }
        return data.withUnsafeBytes { raw in
            var reader = StoredBytesReader(bytes: raw, offset: 1)
            return try? reader.serverRecord(name: name, first: form == compactFirst)
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
    /// A record in form 2, or in form 1 when `first`.
    fileprivate mutating func serverRecord(name: String, first: Bool) throws -> RecordValue {
        func text() throws -> String { first ? try string() : try varintString() }
        let parts = StoredServerRecord.Parts(rawValue: try byte())
        let recordName = parts.contains(.otherName) ? try text() : name
        let zoneName = try text()
        let owner = parts.contains(.otherOwner) ? try text() : RecordZone.ID.defaultOwnerName
        let recordType = try text()
        let changeTag = parts.contains(.changeTag) ? try text() : nil
        let creationDate = parts.contains(.creationDate) ? try date(milliseconds: int64()) : nil
        let modificationDate = parts.contains(.modificationDate) ? try date(milliseconds: int64()) : nil
        let creator = parts.contains(.creator) ? try text() : nil
        let modifier =
            parts.contains(.modifier) ? try text() : parts.contains(.modifierIsCreator) ? creator : nil
        var record = RecordValue(
            recordID: RecordValue.ID(
                recordName: recordName, zoneID: RecordZone.ID(zoneName: zoneName, ownerName: owner)),
            recordType: recordType, fields: try values(first: first), recordChangeTag: changeTag,
            creationDate: creationDate, modificationDate: modificationDate,
            creatorUserRecordID: creator.map(RecordValue.ID.init(userRecordName:)),
            lastModifiedUserRecordID: modifier.map(RecordValue.ID.init(userRecordName:)))
        for (key, value) in try values(first: first) {
            record.replaceWithoutChange(encrypted: key, by: value)
        }
        guard isAtEnd else { throw damaged() }
        return record
    }

    private mutating func values(first: Bool) throws -> [String: FieldValue] {
        if first { return try StoredServerRecord.fields(byteString()) }
        switch StoredServerRecord.Values(rawValue: try byte()) {
        case .empty: return [:]
        case .json: return try StoredServerRecord.fields(Data(varintSlice()))
        case .strings:
            var values: [String: FieldValue] = [:]
            for _ in 0..<(try varint()) {
                let key = try varintString()
                guard values.updateValue(.string(try varintString()), forKey: key) == nil else { throw damaged() }
            }
            return values
        case nil: throw damaged()
        }
    }

    private func date(milliseconds: Int64) throws -> Date {
        guard let date = Date(checkedMillisecondsSince1970: milliseconds) else { throw damaged() }
        return date
    }
}
