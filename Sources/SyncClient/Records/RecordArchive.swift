import Foundation
import SyncCore

/// How a ``Record`` is archived with an `NSCoder` (`NSKeyedArchiver` with secure coding): each
/// system field under its own key, plain types only; the fields, when included, as one compact
/// JSON blob each for the plain and the encrypted values.
///
/// Dates are archived as `Date.timeIntervalSinceReferenceDate`, so they come back `==`.
struct RecordArchive {
    private enum Key {
        static let version = "v"
        static let recordName = "recordName"
        static let zoneName = "zoneName"
        static let ownerName = "ownerName"
        static let recordType = "recordType"
        static let changeTag = "changeTag"
        static let created = "created"
        static let modified = "modified"
        static let creator = "creator"
        static let lastModifier = "lastModifier"
        /// The parent's and the share's record names (both in the record's zone); absent for none.
        static let parent = "parent"
        static let share = "share"
        /// The record's sealed version, as an Int64 with the same bits (absent for none).
        static let sealedVersion = "sealedVersion"
        static let fields = "fields"
        static let encryptedValues = "encryptedValues"
    }

    /// The archive format this code writes; an archive from a newer one is refused, not misread.
    private static let version: Int64 = 1

    let value: RecordValue
    let includingFields: Bool

    init(_ value: RecordValue, includingFields: Bool) {
        self.value = value
        self.includingFields = includingFields
    }

    func encode(with coder: NSCoder) {
        coder.encode(Self.version, forKey: Key.version)
        coder.encode(value.recordID.recordName as NSString, forKey: Key.recordName)
        coder.encode(value.recordID.zoneID.zoneName as NSString, forKey: Key.zoneName)
        coder.encode(value.recordID.zoneID.ownerName as NSString, forKey: Key.ownerName)
        coder.encode(value.recordType as NSString, forKey: Key.recordType)
        if let tag = value.recordChangeTag { coder.encode(tag as NSString, forKey: Key.changeTag) }
        if let date = value.creationDate { coder.encode(date.timeIntervalSinceReferenceDate, forKey: Key.created) }
        if let date = value.modificationDate {
            coder.encode(date.timeIntervalSinceReferenceDate, forKey: Key.modified)
        }
        if let user = value.creatorUserRecordID { coder.encode(user.recordName as NSString, forKey: Key.creator) }
        if let user = value.lastModifiedUserRecordID {
            coder.encode(user.recordName as NSString, forKey: Key.lastModifier)
        }
        if let parent = value.parent { coder.encode(parent.recordID.recordName as NSString, forKey: Key.parent) }
        if let share = value.share { coder.encode(share.recordID.recordName as NSString, forKey: Key.share) }
        if let version = value.sealedVersion { coder.encode(Int64(bitPattern: version), forKey: Key.sealedVersion) }
        guard includingFields else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        if let data = try? encoder.encode(value.fields) { coder.encode(data as NSData, forKey: Key.fields) }
        if !value.encryptedValues.isEmpty, let data = try? encoder.encode(value.encryptedValues) {
            coder.encode(data as NSData, forKey: Key.encryptedValues)
        }
    }

    /// The record in the archive, or `nil` when it is not a record's (or is from a newer format).
    static func decode(from coder: NSCoder) -> RecordValue? {
        // Not `failWithError`: with the unarchiver's default policy (raise), Foundation on Linux traps.
        func fail(_ reason: String) -> RecordValue? { nil }
        // Foundation on Linux traps on decodeObject(of:forKey:) for a key never encoded: ask first.
        func string(_ key: String) -> String? {
            guard coder.containsValue(forKey: key) else { return nil }
            return coder.decodeObject(of: NSString.self, forKey: key) as String?
        }
        func date(_ key: String) -> Date? {
            guard coder.containsValue(forKey: key) else { return nil }
            let seconds = coder.decodeDouble(forKey: key)
            return seconds.isFinite ? Date(timeIntervalSinceReferenceDate: seconds) : nil
        }
        func fields(_ key: String) -> [String: FieldValue]?? {
            guard coder.containsValue(forKey: key) else { return .some(nil) }
            guard let data = coder.decodeObject(of: NSData.self, forKey: key) as Data?,
                let fields = try? JSONReader.decode([String: FieldValue].self, from: data)
            else { return nil }
            return .some(fields)
        }
        guard coder.containsValue(forKey: Key.version) else { return fail("no version") }
        let version = coder.decodeInt64(forKey: Key.version)
        guard version == Self.version else {
            return fail("format \(version), this build reads format \(Self.version); update the app")
        }
        guard let recordName = string(Key.recordName), let zoneName = string(Key.zoneName),
            let ownerName = string(Key.ownerName), let recordType = string(Key.recordType)
        else { return fail("no record ID or type") }
        guard let plain = fields(Key.fields), let encrypted = fields(Key.encryptedValues) else {
            return fail("fields that do not read")
        }
        var value = RecordValue(
            recordID: RecordValue.ID(
                recordName: recordName, zoneID: RecordZone.ID(zoneName: zoneName, ownerName: ownerName)),
            recordType: recordType, fields: plain ?? [:], recordChangeTag: string(Key.changeTag),
            creationDate: date(Key.created), modificationDate: date(Key.modified),
            creatorUserRecordID: string(Key.creator).map(RecordValue.ID.init(userRecordName:)),
            lastModifiedUserRecordID: string(Key.lastModifier).map(RecordValue.ID.init(userRecordName:)))
        for (key, field) in encrypted ?? [:] { value.replaceWithoutChange(encrypted: key, by: field) }
        let zoneID = value.recordID.zoneID
        value.parent = string(Key.parent).map { .init(recordID: RecordValue.ID(recordName: $0, zoneID: zoneID)) }
        value.share = string(Key.share).map { .init(recordID: RecordValue.ID(recordName: $0, zoneID: zoneID)) }
        if coder.containsValue(forKey: Key.sealedVersion) {
            value.sealedVersion = UInt64(bitPattern: coder.decodeInt64(forKey: Key.sealedVersion))
        }
        return value
    }
}
