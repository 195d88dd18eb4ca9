import ContactsModel
import Foundation
import SyncCore

/// A last known server record as the store keeps it in `serverRecord.json` (the column's name stays from
/// the first form): the record's system fields and its values, the encrypted ones in plaintext (the wire
/// leaves them out; this device's file holds its contacts in plaintext anyway). The contact itself is not
/// in it: the row shares the contact's row, or keeps its own copy in `serverRecord.contact`.
///
/// Written now, compact (form 3, ``compact``): a form byte, a byte of flags saying which of the optional
/// parts follow (``Parts``), a byte of shorthands (``Shorthands``), then the parts: the record's name (only
/// when it is not the row's), its zone's name (left out when it is the contacts' zone) and owner (left out
/// when the owner is the default), its type (left out for a contact), change tag, dates (milliseconds since
/// 1970, as the wire has them, 8 bytes each; the modification date left out when it is the creation date),
/// creator and last modifier (left out when the same as the creator), each string as a varint byte count
/// and UTF-8, a user record name the server made (`_` and 32 hexadecimal digits) as its 16 bytes; then the
/// plain and the encrypted values, each a byte saying how (``Values``): none, only strings (a varint count,
/// then each key and value), or the wire's JSON of the field dictionary. A contact's record takes about 45
/// bytes. Form 2 (``compactSecond``), read as it was, had no shorthands (about 90 bytes); form 1
/// (``compactFirst``) had UInt32 counts and always the JSON (about 140 bytes).
///
/// A record with parts the compact form leaves out (a parent, a share, keys marked changed) is kept as
/// JSON, the form every version before the compact forms wrote, which is read as it was.
enum StoredServerRecord {
    /// The first byte of the compact form written now; JSON starts with `{`.
    static let compact: UInt8 = 3
    /// The first byte of the second compact form.
    static let compactSecond: UInt8 = 2
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

    /// Parts of form 3 written short or left out.
    fileprivate struct Shorthands: OptionSet {
        let rawValue: UInt8
        /// The zone's name is the contacts' zone's; not written.
        static let contactsZone = Shorthands(rawValue: 1 << 0)
        /// The type is a contact's; not written.
        static let contactType = Shorthands(rawValue: 1 << 1)
        /// The modification date is the creation date; not written.
        static let modifiedAtCreation = Shorthands(rawValue: 1 << 2)
        /// The creator is a user record name the server made, written as its 16 bytes.
        static let creatorID = Shorthands(rawValue: 1 << 3)
        /// The last modifier (written apart from the creator) likewise.
        static let modifierID = Shorthands(rawValue: 1 << 4)
        static let all: Shorthands = [.contactsZone, .contactType, .modifiedAtCreation, .creatorID, .modifierID]
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

        var shorthands: Shorthands = []
        if zone.zoneName == Contact.zoneID.zoneName { shorthands.insert(.contactsZone) }
        if record.recordType == Contact.recordType { shorthands.insert(.contactType) }
        let created = record.creationDate?.millisecondsSince1970
        let modified = record.modificationDate?.millisecondsSince1970
        if created != nil && modified == created { shorthands.insert(.modifiedAtCreation) }
        let creatorID = creator.flatMap(UUID.init(userRecordName:))
        let modifierID = parts.contains(.modifier) ? modifier.flatMap(UUID.init(userRecordName:)) : nil
        if creatorID != nil { shorthands.insert(.creatorID) }
        if modifierID != nil { shorthands.insert(.modifierID) }

        var writer = StoredBytesWriter(capacity: 64)
        writer.byte(compact)
        writer.byte(parts.rawValue)
        writer.byte(shorthands.rawValue)
        if parts.contains(.otherName) { writer.varintString(record.recordID.recordName) }
        if !shorthands.contains(.contactsZone) { writer.varintString(zone.zoneName) }
        if parts.contains(.otherOwner) { writer.varintString(zone.ownerName) }
        if !shorthands.contains(.contactType) { writer.varintString(record.recordType) }
        if let tag = record.recordChangeTag { writer.varintString(tag) }
        if let created { writer.int64(created) }
        if let modified, !shorthands.contains(.modifiedAtCreation) { writer.int64(modified) }
        if let creatorID {
            writer.uuid(creatorID)
        } else if let creator {
            writer.varintString(creator)
        }
        if let modifierID {
            writer.uuid(modifierID)
        } else if parts.contains(.modifier), let modifier {
            writer.varintString(modifier)
        }
        values(record.fields, &writer)
        values(record.encryptedValues, &writer)
        return writer.data
    }

    /// A dictionary of values in form 2 and 3: strings alone as strings, anything else as the wire's JSON.
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
        guard let form = data.first, (compactFirst...compact).contains(form) else { return decodeJSON(data) }
        return data.withUnsafeBytes { raw in
            var reader = StoredBytesReader(bytes: raw, offset: 1)
            return try? reader.serverRecord(name: name, form: form)
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
    /// A record in form `form` (1, 2 or 3).
    fileprivate mutating func serverRecord(name: String, form: UInt8) throws -> RecordValue {
        let first = form == StoredServerRecord.compactFirst
        func text() throws -> String { first ? try string() : try varintString() }
        func user(asID: Bool) throws -> String {
            asID ? try uuid().userRecordName : try text()
        }
        let parts = StoredServerRecord.Parts(rawValue: try byte())
        let shorthands =
            form == StoredServerRecord.compact ? StoredServerRecord.Shorthands(rawValue: try byte()) : []
        // Only what form 3 writes: a shorthand for a part the flags say is not there is damage.
        guard StoredServerRecord.Shorthands.all.isSuperset(of: shorthands),
            !shorthands.contains(.modifiedAtCreation) || parts.isSuperset(of: [.creationDate, .modificationDate]),
            !shorthands.contains(.creatorID) || parts.contains(.creator),
            !shorthands.contains(.modifierID) || parts.contains(.modifier)
        else { throw damaged() }
        let recordName = parts.contains(.otherName) ? try text() : name
        let zoneName = shorthands.contains(.contactsZone) ? Contact.zoneID.zoneName : try text()
        let owner = parts.contains(.otherOwner) ? try text() : RecordZone.ID.defaultOwnerName
        let recordType = shorthands.contains(.contactType) ? Contact.recordType : try text()
        let changeTag = parts.contains(.changeTag) ? try text() : nil
        let creationDate = parts.contains(.creationDate) ? try date(milliseconds: int64()) : nil
        let modificationDate =
            !parts.contains(.modificationDate)
            ? nil
            : shorthands.contains(.modifiedAtCreation) ? creationDate : try date(milliseconds: int64())
        let creator = parts.contains(.creator) ? try user(asID: shorthands.contains(.creatorID)) : nil
        let modifier =
            parts.contains(.modifier)
            ? try user(asID: shorthands.contains(.modifierID))
            : parts.contains(.modifierIsCreator) ? creator : nil
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
