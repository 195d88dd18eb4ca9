import Foundation

/// A record: a typed bag of fields plus the system fields the server maintains.
///
/// Mirrors `CKRecord`. Setting a field through the subscript records the key in
/// ``changedKeys``, which the `changedKeys` save policy sends. The system fields
/// (change tag, dates, creator, last modifier) are set by the server; keep the record
/// the server returned (or its ``systemFields``) to save the next change against it.
public struct RecordValue: Sendable, Hashable {
    /// Identifies a record: its name and its zone.
    public struct ID: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The name of the implicit zone that user record IDs live in.
        public static let userZoneName = "_defaultZone"

        /// The record's name, unique within its zone.
        public var recordName: String
        /// The zone that holds the record.
        public var zoneID: RecordZone.ID

        /// Creates a record ID.
        public init(recordName: String, zoneID: RecordZone.ID) {
            self.recordName = recordName
            self.zoneID = zoneID
        }

        /// Creates the ID of a user record, as the server names its users.
        public init(userRecordName: String) {
            self.init(recordName: userRecordName, zoneID: RecordZone.ID(zoneName: Self.userZoneName))
        }

        public var description: String { "\(recordName) in \(zoneID)" }

        public static func < (lhs: ID, rhs: ID) -> Bool {
            (lhs.zoneID, lhs.recordName) < (rhs.zoneID, rhs.recordName)
        }
    }

    /// A field value that points at another record.
    public struct Reference: Codable, Sendable, Hashable {
        /// What happens to the referring record when the target is deleted.
        public enum Action: String, Codable, Sendable {
            case none
            case deleteSelf
        }

        /// The record referred to.
        public var recordID: ID
        /// The delete action: with `deleteSelf`, deleting the record referred to (of the same zone)
        /// deletes the record holding the reference too, on the server, in the same change.
        public var action: Action

        /// Creates a reference.
        public init(recordID: ID, action: Action = .none) {
            self.recordID = recordID
            self.action = action
        }
    }

    /// The server-maintained metadata of a record, without its fields.
    ///
    /// The counterpart of `CKRecord.encodeSystemFields(with:)`: store it beside local data and
    /// rebuild a record from it to save the next change with the right change tag.
    public struct SystemFields: Codable, Sendable, Hashable {
        public var recordID: ID
        public var recordType: String
        public var recordChangeTag: String?
        public var creationDate: Date?
        public var modificationDate: Date?
        public var creatorUserRecordID: ID?
        public var lastModifiedUserRecordID: ID?
        public var parent: Reference?
        public var share: Reference?
        /// The record's sealed version (see ``RecordValue/sealedVersion``); kept on the device, never on the wire.
        public var sealedVersion: UInt64?
    }

    /// The values, behind one reference. Records are copied often (into arrays, events, closures and
    /// answers), and a copy of two dozen strings, dictionaries and optionals is two dozen reference counts
    /// taken and given back; a copy of this is one. A change copies the values first when another copy of
    /// the record shares them (``writable``), so a record still behaves as a value.
    private final class Storage: @unchecked Sendable {
        // Sendable: a storage is changed only when one record alone holds it (``writable``).
        let recordID: ID
        let recordType: String
        var fields: [String: FieldValue] = [:]
        var encryptedValues: [String: FieldValue] = [:]
        var changedKeys: Set<String> = []
        var originals: [String: (plain: FieldValue?, encrypted: FieldValue?)] = [:]
        var recordChangeTag: String?
        var creationDate: Date?
        var modificationDate: Date?
        var creatorUserRecordID: ID?
        var lastModifiedUserRecordID: ID?
        var parent: Reference?
        var share: Reference?
        var sealedVersion: UInt64?

        init(recordID: ID, recordType: String) {
            self.recordID = recordID
            self.recordType = recordType
        }

        func copy() -> Storage {
            let copy = Storage(recordID: recordID, recordType: recordType)
            copy.fields = fields
            copy.encryptedValues = encryptedValues
            copy.changedKeys = changedKeys
            copy.originals = originals
            copy.recordChangeTag = recordChangeTag
            copy.creationDate = creationDate
            copy.modificationDate = modificationDate
            copy.creatorUserRecordID = creatorUserRecordID
            copy.lastModifiedUserRecordID = lastModifiedUserRecordID
            copy.parent = parent
            copy.share = share
            copy.sealedVersion = sealedVersion
            return copy
        }
    }

    private var storage: Storage

    /// The storage to change: this record's own, copied first if another record shares it.
    private var writable: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    /// The record's identity.
    public var recordID: ID { storage.recordID }
    /// The record's type, such as `Contact`.
    public var recordType: String { storage.recordType }
    /// The field values, by key.
    public private(set) var fields: [String: FieldValue] {
        get { storage.fields }
        _modify { yield &writable.fields }
    }
    /// Field values to be encrypted on the device, in plaintext, by key (`CKRecord.encryptedValues`).
    ///
    /// Never on the wire and never encoded: the client library seals each into an `encrypted`
    /// field of ``fields`` before sending, and opens those it receives into this dictionary.
    public private(set) var encryptedValues: [String: FieldValue] {
        get { storage.encryptedValues }
        _modify { yield &writable.encryptedValues }
    }
    /// The keys set or removed since the record was created or last came from the server.
    public internal(set) var changedKeys: Set<String> {
        get { storage.changedKeys }
        _modify { yield &writable.changedKeys }
    }
    /// What each changed key held before its first change (plain and encrypted): the record's values as
    /// it came from the server, for ``ancestor``. Never encoded, and not part of equality.
    private var originals: [String: (plain: FieldValue?, encrypted: FieldValue?)] {
        get { storage.originals }
        _modify { yield &writable.originals }
    }

    /// The server's version stamp; changes on every save. `nil` for a record never saved.
    public var recordChangeTag: String? {
        get { storage.recordChangeTag }
        _modify { yield &writable.recordChangeTag }
    }
    /// When the server first stored the record.
    public var creationDate: Date? {
        get { storage.creationDate }
        _modify { yield &writable.creationDate }
    }
    /// When the server last stored the record.
    public var modificationDate: Date? {
        get { storage.modificationDate }
        _modify { yield &writable.modificationDate }
    }
    /// The user who created the record.
    public var creatorUserRecordID: ID? {
        get { storage.creatorUserRecordID }
        _modify { yield &writable.creatorUserRecordID }
    }
    /// The user who last saved the record.
    public var lastModifiedUserRecordID: ID? {
        get { storage.lastModifiedUserRecordID }
        _modify { yield &writable.lastModifiedUserRecordID }
    }
    /// The record above this one in a hierarchy, in the same zone (`CKRecord.parent`): a record whose
    /// parent is in a shared hierarchy is shared with it. Sent with every save; nil for none.
    public var parent: Reference? {
        get { storage.parent }
        _modify { yield &writable.parent }
    }
    /// The share whose root this record is (`CKRecord.share`). Set by the server when a share is
    /// saved with this record as its root; ignored in requests.
    public var share: Reference? {
        get { storage.share }
        _modify { yield &writable.share }
    }
    /// The version sealed with the record's encrypted values: a number that only grows for the record, from
    /// 1 for its first save. Read from inside the seal when the record arrives (0 for values sealed before
    /// versions were), and sealed with the next save as this version + 1, so that a save built on this record
    /// goes above it. Never sent in plain: a device that has seen a version refuses an older one as a
    /// rollback. `nil` for a record with no encrypted values, or never saved.
    public var sealedVersion: UInt64? {
        get { storage.sealedVersion }
        _modify { yield &writable.sealedVersion }
    }

    /// Creates a new, never-saved record.
    public init(recordType: String, recordID: ID) {
        storage = Storage(recordID: recordID, recordType: recordType)
    }

    /// Recreates a record from system fields kept locally, with no field values.
    public init(systemFields: SystemFields) {
        self.init(recordType: systemFields.recordType, recordID: systemFields.recordID)
        recordChangeTag = systemFields.recordChangeTag
        creationDate = systemFields.creationDate
        modificationDate = systemFields.modificationDate
        creatorUserRecordID = systemFields.creatorUserRecordID
        lastModifiedUserRecordID = systemFields.lastModifiedUserRecordID
        parent = systemFields.parent
        share = systemFields.share
        sealedVersion = systemFields.sealedVersion
    }

    /// The record's system fields.
    public var systemFields: SystemFields {
        SystemFields(
            recordID: recordID, recordType: recordType, recordChangeTag: recordChangeTag,
            creationDate: creationDate, modificationDate: modificationDate,
            creatorUserRecordID: creatorUserRecordID, lastModifiedUserRecordID: lastModifiedUserRecordID,
            parent: parent, share: share, sealedVersion: sealedVersion)
    }

    /// Reads or writes a field. Writing `nil` removes it. Every write marks the key changed.
    public subscript(key: String) -> FieldValue? {
        get { fields[key] }
        set {
            keepOriginal(of: key)
            fields[key] = newValue
            changedKeys.insert(key)
        }
    }

    /// Reads or writes a value to be encrypted. Writing `nil` removes it. Every write marks the key changed.
    public subscript(encrypted key: String) -> FieldValue? {
        get { encryptedValues[key] }
        set {
            keepOriginal(of: key)
            encryptedValues[key] = newValue
            changedKeys.insert(key)
        }
    }

    /// Replaces a field's value without marking it changed: how the client library swaps an
    /// `encrypted` field for its plaintext (and back) at the wire.
    public mutating func replaceWithoutChange(field key: String, by value: FieldValue?) {
        fields[key] = value
    }

    /// Replaces a value to be encrypted without marking it changed (see ``replaceWithoutChange(field:by:)``).
    public mutating func replaceWithoutChange(encrypted key: String, by value: FieldValue?) {
        encryptedValues[key] = value
    }

    /// All field keys, plain and encrypted, sorted.
    public var allKeys: [String] { Set(fields.keys).union(encryptedValues.keys).sorted() }

    /// Forgets which keys changed, as after a successful save.
    public mutating func clearChangedKeys() {
        changedKeys = []
        originals = [:]
    }

    /// The record this one was changed from (`CKError.ancestorRecord`): the same system fields with every
    /// changed key back at the value it held before its first change. `nil` for a record never saved,
    /// which has no ancestor. Keys changed on a record made from system fields alone come back absent,
    /// as the record held them.
    public var ancestor: RecordValue? {
        guard recordChangeTag != nil else { return nil }
        var value = self
        for (key, original) in originals {
            value.fields[key] = original.plain
            value.encryptedValues[key] = original.encrypted
        }
        value.clearChangedKeys()
        return value
    }

    private mutating func keepOriginal(of key: String) {
        if !changedKeys.contains(key), originals[key] == nil {
            originals[key] = (fields[key], encryptedValues[key])
        }
    }

    /// Two records are equal when their identity, type, fields and system fields are;
    /// ``changedKeys`` is bookkeeping and does not count, nor does ``sealedVersion``, which a record as sent
    /// and the same record as the server answered it (before it is opened) do not share.
    public static func == (lhs: RecordValue, rhs: RecordValue) -> Bool {
        if lhs.storage === rhs.storage { return true }
        return lhs.recordID == rhs.recordID && lhs.recordType == rhs.recordType && lhs.fields == rhs.fields
            && lhs.encryptedValues == rhs.encryptedValues
            && lhs.recordChangeTag == rhs.recordChangeTag && lhs.creationDate == rhs.creationDate
            && lhs.modificationDate == rhs.modificationDate
            && lhs.creatorUserRecordID == rhs.creatorUserRecordID
            && lhs.lastModifiedUserRecordID == rhs.lastModifiedUserRecordID && lhs.parent == rhs.parent
            && lhs.share == rhs.share
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(recordID)
        hasher.combine(recordType)
        hasher.combine(recordChangeTag)
    }
}

extension RecordValue: Codable {
    private enum CodingKeys: String, CodingKey {
        case recordID, recordType, fields, changedKeys, recordChangeTag, creationDate, modificationDate
        case creatorUserRecordName, lastModifiedUserRecordName, parent, share
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        storage = Storage(
            recordID: try container.decode(ID.self, forKey: .recordID),
            recordType: try container.decode(String.self, forKey: .recordType))
        // Optional members may be left out, but not sent as null: the API gives null no meaning.
        fields = try container.decodeIfPresentNotNull([String: FieldValue].self, forKey: .fields) ?? [:]
        let keys = try container.decodeIfPresentNotNull([String].self, forKey: .changedKeys) ?? []
        changedKeys = Set(keys)
        if changedKeys.count != keys.count {
            let repeated = Dictionary(keys.map { ($0, 1) }, uniquingKeysWith: +).first { $0.value > 1 }?.key ?? ""
            throw DecodingError.dataCorruptedError(
                forKey: .changedKeys, in: container,
                debugDescription: "lists \(NameRules.quoted(repeated)) more than once; list each key once")
        }
        recordChangeTag = try container.decodeIfPresentNotNull(String.self, forKey: .recordChangeTag)
        creationDate = try Self.decodeDate(container, .creationDate)
        modificationDate = try Self.decodeDate(container, .modificationDate)
        creatorUserRecordID = try container.decodeIfPresentNotNull(String.self, forKey: .creatorUserRecordName).map(
            ID.init(userRecordName:))
        lastModifiedUserRecordID = try container.decodeIfPresentNotNull(
            String.self, forKey: .lastModifiedUserRecordName
        ).map(ID.init(userRecordName:))
        parent = try container.decodeIfPresentNotNull(Reference.self, forKey: .parent)
        share = try container.decodeIfPresentNotNull(Reference.self, forKey: .share)
    }

    private static func decodeDate(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Date? {
        guard let milliseconds = try container.decodeIfPresentNotNull(Int64.self, forKey: key) else { return nil }
        guard let date = Date(checkedMillisecondsSince1970: milliseconds) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: Date.outOfRange(milliseconds: milliseconds))
        }
        return date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(recordID, forKey: .recordID)
        try container.encode(recordType, forKey: .recordType)
        try container.encode(fields, forKey: .fields)
        if !changedKeys.isEmpty { try container.encode(changedKeys.sorted(), forKey: .changedKeys) }
        try container.encodeIfPresent(recordChangeTag, forKey: .recordChangeTag)
        try container.encodeIfPresent(creationDate?.millisecondsSince1970, forKey: .creationDate)
        try container.encodeIfPresent(modificationDate?.millisecondsSince1970, forKey: .modificationDate)
        try container.encodeIfPresent(creatorUserRecordID?.recordName, forKey: .creatorUserRecordName)
        try container.encodeIfPresent(lastModifiedUserRecordID?.recordName, forKey: .lastModifiedUserRecordName)
        try container.encodeIfPresent(parent, forKey: .parent)
        try container.encodeIfPresent(share, forKey: .share)
    }
}

extension RecordValue {
    /// Creates a record with every field and system field given, as the server builds them.
    public init(
        recordID: ID, recordType: String, fields: [String: FieldValue], recordChangeTag: String?,
        creationDate: Date?, modificationDate: Date?, creatorUserRecordID: ID?, lastModifiedUserRecordID: ID?
    ) {
        storage = Storage(recordID: recordID, recordType: recordType)
        self.fields = fields
        self.recordChangeTag = recordChangeTag
        self.creationDate = creationDate
        self.modificationDate = modificationDate
        self.creatorUserRecordID = creatorUserRecordID
        self.lastModifiedUserRecordID = lastModifiedUserRecordID
    }
}
