import ContactsModel
import Foundation
import SyncCore

extension Contact {
    /// Contacts live in one zone of the private database.
    public static let zoneID = RecordZone.ID(zoneName: "Contacts")
    public static let recordType = "Contact"

    public var recordID: RecordValue.ID { recordID(in: Self.zoneID) }

    /// The contact's record ID in the zone of a book.
    public func recordID(in zoneID: RecordZone.ID) -> RecordValue.ID {
        RecordValue.ID(recordName: id.canonicalString, zoneID: zoneID)
    }

    /// The encrypted field that holds the whole contact, in the store's binary format (``ContactFormat``).
    static let contactField = "contact"

    /// The encrypted field that names the device that saved the record, for the conflict log.
    static let deviceField = "device"

    /// The device that saved `record`, as it named itself; nil for records of earlier versions.
    static func device(of record: RecordValue) -> String? {
        record[encrypted: deviceField]?.stringValue
    }

    /// The fields, one per contact field and one per modification date, that versions before the
    /// whole-contact field wrote (encrypted, or in plain before encryption).
    static let fieldPerValueKeys: [String] = {
        // The photo came later, and its record field is the photo's asset (``photoField``).
        let fields = Field.allCases.filter { $0 != .photo }
        return fields.map(\.rawValue) + fields.map { $0.rawValue + "Modified" }
    }()

    /// Writes the contact into `record` (a last known server record keeps its change tag): the whole
    /// contact, its edit times too, as one encrypted value, so the server stores only ciphertext and a
    /// contact costs one seal, not fourteen. Fields that earlier versions wrote one per value are removed.
    public func write(to record: inout RecordValue) {
        Self.write(storedForm: ContactFormat.encode(self), to: &record)
    }

    /// Writes a contact's stored form (``ContactFormat``) into `record`, as ``write(to:)`` does.
    private static func write(storedForm: Data, to record: inout RecordValue) {
        for key in record.fields.keys where fieldPerValueKeySet.contains(key) {
            record.replaceWithoutChange(field: key, by: nil)
        }
        for key in record.encryptedValues.keys where fieldPerValueKeySet.contains(key) {
            record.replaceWithoutChange(encrypted: key, by: nil)
        }
        record[encrypted: contactField] = .bytes(storedForm)
    }

    /// ``fieldPerValueKeys``, to look keys up in: a record holds two or three keys, and looking up each of
    /// the list's in it was a cost of its own.
    private static let fieldPerValueKeySet = Set(fieldPerValueKeys)

    /// Whether `record` holds any field earlier versions wrote one per value.
    private static func hasFieldPerValue(_ record: RecordValue) -> Bool {
        record.fields.keys.contains(where: fieldPerValueKeySet.contains)
            || record.encryptedValues.keys.contains(where: fieldPerValueKeySet.contains)
    }

    /// The contact (``ContactFormat``, format 3) as `record` holds it, when the store can keep it without
    /// reading it: the whole contact in the format written now, and nothing written one field per value.
    static func storedForm(in record: RecordValue) -> Data? {
        guard let stored = record[encrypted: contactField]?.bytesValue,
            let id = UUID(canonical: record.recordID.recordName),
            ContactFormat.isCurrent(stored, id: id), !hasFieldPerValue(record)
        else { return nil }
        return stored
    }

    /// The record ``record(base:in:)`` makes for the contact `id` stored as `row` (a row of the store): a
    /// contact stored in the current format goes in expanded, without being read and written again.
    static func record(stored row: Data, id: UUID, base: RecordValue?, in zoneID: RecordZone.ID) throws -> RecordValue {
        let stored = try ContactFormat.wire(stored: row)
        guard ContactFormat.isCurrent(stored, id: id) else {
            return try ContactFormat.decode(stored).record(base: base, in: zoneID)
        }
        var record =
            base
            ?? RecordValue(
                recordType: recordType, recordID: RecordValue.ID(recordName: id.canonicalString, zoneID: zoneID))
        write(storedForm: stored, to: &record)
        return record
    }

    /// A record to save in `zoneID`: `base` (the last known server record) with this contact's values.
    public func record(base: RecordValue?, in zoneID: RecordZone.ID = Self.zoneID) -> RecordValue {
        var record = base ?? RecordValue(recordType: Self.recordType, recordID: recordID(in: zoneID))
        write(to: &record)
        return record
    }

    /// Reads a contact from a server record; throws when the record is not a contact.
    ///
    /// Records written by earlier versions, one field per value (encrypted, or in plain before
    /// encryption), are read too. A record with both (a device not yet upgraded edited a contact that an
    /// upgraded one wrote) is read as the two merged, the newer edit of each field winning.
    public init(record: RecordValue) throws {
        guard record.recordType == Self.recordType, let id = UUID(canonical: record.recordID.recordName) else {
            throw ContactError.notAContact(record.recordID.recordName)
        }
        let whole = record[encrypted: Self.contactField].flatMap(\.bytesValue).flatMap { try? ContactFormat.decode($0) }
        switch (whole, Self.hasFieldPerValue(record)) {
        case (var whole?, false):
            whole.id = id
            self = whole
        case (var whole?, true):
            whole.id = id
            self = ContactMerge.merge(base: nil, local: try Self(fieldPerValue: record, id: id), remote: whole)
        case (nil, _):
            self = try Self(fieldPerValue: record, id: id)
        }
    }

    /// Reads a contact from the fields earlier versions wrote, one per value.
    private init(fieldPerValue record: RecordValue, id: UUID) throws {
        func value(_ key: String) -> FieldValue? { record[encrypted: key] ?? record[key] }
        self.init(id: id, name: value("name")?.stringValue ?? "")
        emails = RecordJSON.items(value("emails")) ?? []
        phones = RecordJSON.items(value("phones")) ?? []
        organization = value("organization")?.stringValue ?? ""
        address = RecordJSON.address(value("address")) ?? PostalAddress()
        notes = value("notes")?.stringValue ?? ""
        extras = RecordJSON.strings(value("extras")) ?? []
        // A field those versions did not have takes the extras' time (``takeStoredExtras()``).
        modified = [:]
        for field in Field.allCases {
            modified[field] = value(field.rawValue + "Modified")?.dateValue
        }
        takeStoredExtras()
    }

    /// Whether the record keeps any contact field in plain, as versions before encryption wrote them.
    public static func hasPlainFields(_ record: RecordValue) -> Bool {
        !record.fields.isEmpty
    }
}
