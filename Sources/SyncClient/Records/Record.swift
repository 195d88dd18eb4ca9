import Foundation
import SyncCore
import Synchronization

/// A record: a typed bag of fields plus the system fields the server maintains. The counterpart
/// of `CKRecord`, with the same names: `record[key] = "Ada"`, `record[key] as? String`,
/// `record.encryptedValues[key]`, `encodeSystemFields(with:)`, `Record(coder:)`.
///
/// A class, as `CKRecord` is, because apps fill in a record they got from a cache or from the
/// engine in place (`func populate(_ record: Record)`), and the engine's record provider hands
/// back the very object it filled. Its state sits behind a lock, so a record can be passed
/// between tasks; ``value`` is a snapshot as the wire type ``RecordValue``.
public final class Record: NSObject, NSSecureCoding, @unchecked Sendable {
    /// Identifies a record: its name and its zone (`CKRecord.ID`).
    public typealias ID = RecordValue.ID
    /// A field value pointing at another record (`CKRecord.Reference`).
    public typealias Reference = RecordValue.Reference
    /// A record's type, such as `"Contact"` (`CKRecord.RecordType`).
    public typealias RecordType = String
    /// A field's name (`CKRecord.FieldKey`); declare yours as `static let` in an extension.
    public typealias FieldKey = String

    private let state: Mutex<RecordValue>

    /// Creates a new, never-saved record.
    public init(recordType: RecordType, recordID: ID) {
        state = Mutex(RecordValue(recordType: recordType, recordID: recordID))
        super.init()
    }

    /// Creates a new record with a random name (a UUID) in `zoneID`.
    ///
    /// CloudKit also offers a default zone; a sync server has none, so the zone is always named.
    public convenience init(recordType: RecordType, zoneID: RecordZone.ID) {
        self.init(recordType: recordType, recordID: ID(recordName: UUID().uuidString, zoneID: zoneID))
    }

    /// Creates a record holding `value`.
    public init(_ value: RecordValue) {
        state = Mutex(value)
        super.init()
    }

    /// The record now, as a value.
    public var value: RecordValue { state.withLock { $0 } }

    /// Changes the record's value under its lock.
    package func update<T>(_ body: (inout RecordValue) throws -> T) rethrows -> T {
        try state.withLock { try body(&$0) }
    }

    // MARK: Identity and system fields

    /// The record's identity.
    public var recordID: ID { state.withLock { $0.recordID } }
    /// The record's type.
    public var recordType: RecordType { state.withLock { $0.recordType } }
    /// The server's version stamp; changes on every save. `nil` for a record never saved.
    public var recordChangeTag: String? { state.withLock { $0.recordChangeTag } }
    /// When the server first stored the record.
    public var creationDate: Date? { state.withLock { $0.creationDate } }
    /// When the server last stored the record.
    public var modificationDate: Date? { state.withLock { $0.modificationDate } }
    /// The user who created the record.
    public var creatorUserRecordID: ID? { state.withLock { $0.creatorUserRecordID } }
    /// The user who last saved the record.
    public var lastModifiedUserRecordID: ID? { state.withLock { $0.lastModifiedUserRecordID } }
    /// The version sealed with the record's encrypted values, read from inside the seal (see
    /// ``RecordValue/sealedVersion``); archived with the system fields, so that a record rebuilt from them
    /// saves above it. `nil` for a record with no encrypted values, or never saved.
    public var sealedVersion: UInt64? { state.withLock { $0.sealedVersion } }

    // MARK: Hierarchy and sharing

    /// The record above this one (`CKRecord.parent`), in the same zone. A record whose parent is in a
    /// shared hierarchy is shared with it; saved with the record.
    public var parent: Reference? {
        get { state.withLock { $0.parent } }
        set { state.withLock { $0.parent = newValue } }
    }

    /// Puts this record below `parent` (`CKRecord.setParent(_:)`); nil takes it out of its hierarchy.
    public func setParent(_ parent: Record?) {
        setParent(parent?.recordID)
    }

    /// Puts this record below the record `parentID` (`CKRecord.setParent(_:)`).
    public func setParent(_ parentID: ID?) {
        self.parent = parentID.map { Reference(recordID: $0, action: .none) }
    }

    /// The share whose root this record is (`CKRecord.share`); set by the server.
    public var share: Reference? { state.withLock { $0.share } }

    // MARK: Fields

    /// Reads or writes a plain field; writing `nil` removes it. Numbers read back as `NSNumber`,
    /// so `as? Int`, `as? Int64`, `as? Double` and `as? Bool` all work, as with CloudKit.
    public subscript(key: FieldKey) -> (any RecordValueProtocol)? {
        get { state.withLock { $0[key] }?.recordValue }
        set { state.withLock { $0[key] = newValue?.recordFieldValue } }
    }

    /// The values encrypted on this device before they are sent (`CKRecord.encryptedValues`).
    /// The server stores and returns only ciphertext.
    public var encryptedValues: any RecordKeyValueSetting { EncryptedValues(record: self) }

    /// The keys of every field, plain and encrypted.
    public func allKeys() -> [FieldKey] { state.withLock { $0.allKeys } }

    /// The keys set or removed since the record was created or last came from the server.
    public func changedKeys() -> [FieldKey] { state.withLock { $0.changedKeys.sorted() } }

    public override var description: String {
        let value = self.value
        return "<Record \(value.recordType) \(value.recordID) tag \(value.recordChangeTag ?? "none")>"
    }

    // MARK: Archiving

    public static var supportsSecureCoding: Bool { true }

    /// Encodes the whole record: system fields and every field, encrypted ones in plaintext
    /// (as `CKRecord` archives them; the archive stays on the device).
    public func encode(with coder: NSCoder) {
        RecordArchive(value, includingFields: true).encode(with: coder)
    }

    /// Encodes only the system fields (identity, type, change tag, dates, users): what an app
    /// keeps beside its own data to save the next change against the server's version.
    /// `Record(coder:)` rebuilds a record with no fields from it.
    public func encodeSystemFields(with coder: NSCoder) {
        RecordArchive(value, includingFields: false).encode(with: coder)
    }

    /// Decodes a record archived with ``encode(with:)`` or ``encodeSystemFields(with:)``; `nil`
    /// when the archive is not one.
    public required init?(coder: NSCoder) {
        guard let value = RecordArchive.decode(from: coder) else { return nil }
        state = Mutex(value)
        super.init()
    }
}
