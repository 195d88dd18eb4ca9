import Foundation
import SyncCore

/// A record row: a live record or, when ``isDeleted``, its tombstone.
public struct StoredRecord: Sendable, Hashable {
    public var key: RecordKey
    public var recordType: String
    /// The fields as JSON (``FieldCoding``); empty for a tombstone.
    public var fields: Data
    public var changeTag: String
    public var createdAt: Int64
    public var creator: String
    public var modifiedAt: Int64
    public var modifier: String
    /// The owner's change sequence number of this row's last change.
    public var seq: Int64
    public var isDeleted: Bool
    /// The `X-Writer-ID` of the request that wrote this version ("" for none): a fetch asking to leave
    /// out that writer's saves skips it.
    public var writer: String
    /// The record's parent (`CKRecord.parent`), a record of the same zone; nil for none.
    public var parentName: String?
    /// When the record is the root of a record-hierarchy share: that share's record name.
    public var shareName: String?
    /// The root of the shared hierarchy the record is in (itself, for a root), kept up to date as
    /// parents and shares change; nil outside every shared hierarchy. A tombstone keeps the root
    /// its record had, so that the share's participants hear of the deletion.
    public var shareRoot: String?

    /// The columns both stores read a record row from, in the order their readers take them.
    static let columns = """
        zone_name, record_name, record_type, fields, change_tag, created_at, creator, modified_at, modifier, seq, \
        deleted, parent_name, share_name, share_root
        """

    public init(
        key: RecordKey, recordType: String, fields: Data, changeTag: String, createdAt: Int64, creator: String,
        modifiedAt: Int64, modifier: String, seq: Int64, isDeleted: Bool, writer: String = "",
        parentName: String? = nil, shareName: String? = nil, shareRoot: String? = nil
    ) {
        self.writer = writer
        self.parentName = parentName
        self.shareName = shareName
        self.shareRoot = shareRoot
        self.key = key
        self.recordType = recordType
        self.fields = fields
        self.changeTag = changeTag
        self.createdAt = createdAt
        self.creator = creator
        self.modifiedAt = modifiedAt
        self.modifier = modifier
        self.seq = seq
        self.isDeleted = isDeleted
    }

    /// Writes the record as clients see it, splicing the stored fields JSON in unchanged (or `fields`, when
    /// given: none for an empty `Data`).
    public func write(to writer: inout JSONWriter, in zoneID: RecordZone.ID, fields: Data? = nil) {
        let fields = fields ?? self.fields
        writer.record(
            recordID: RecordValue.ID(recordName: key.recordName, zoneID: zoneID), recordType: recordType,
            rawFields: fields.isEmpty ? Data("{}".utf8) : fields, recordChangeTag: changeTag, creationDate: createdAt,
            modificationDate: modifiedAt, creatorUserRecordName: creator, lastModifiedUserRecordName: modifier,
            parent: reference(parentName, in: zoneID), share: reference(shareName, in: zoneID))
    }

    /// The record with its fields cut to `desiredKeys` (all for nil).
    public func selecting(_ desiredKeys: [String]?) throws -> StoredRecord {
        guard desiredKeys != nil else { return self }
        var record = self
        record.fields = try FieldCoding.selecting(desiredKeys, from: fields)
        return record
    }

    private func reference(_ recordName: String?, in zoneID: RecordZone.ID) -> RecordValue.Reference? {
        recordName.map { RecordValue.Reference(recordID: RecordValue.ID(recordName: $0, zoneID: zoneID)) }
    }

    /// The record as clients see it, under the given zone ID.
    public func record(in zoneID: RecordZone.ID) throws -> RecordValue {
        var record = RecordValue(
            recordID: RecordValue.ID(recordName: key.recordName, zoneID: zoneID), recordType: recordType,
            fields: try FieldCoding.decode(fields), recordChangeTag: changeTag,
            creationDate: Date(millisecondsSince1970: createdAt),
            modificationDate: Date(millisecondsSince1970: modifiedAt),
            creatorUserRecordID: RecordValue.ID(userRecordName: creator),
            lastModifiedUserRecordID: RecordValue.ID(userRecordName: modifier))
        record.parent = reference(parentName, in: zoneID)
        record.share = reference(shareName, in: zoneID)
        return record
    }
}

/// How record fields are stored: the wire's JSON with sorted keys, so equal fields give equal bytes
/// and responses can splice them in without decoding.
public enum FieldCoding {
    public static func encode(_ fields: [String: FieldValue]) -> Data {
        var writer = JSONWriter(capacity: 256)
        writer.fields(fields)
        return Data(writer.bytes)
    }

    public static func decode(_ data: Data) throws -> [String: FieldValue] {
        if data.isEmpty { return [:] }
        return try JSONReader.decode([String: FieldValue].self, from: data)
    }

    /// Stored fields cut down to a request's `desiredKeys`: all of them for nil, none for an empty list.
    public static func selecting(_ desiredKeys: [String]?, from data: Data) throws -> Data {
        guard let desiredKeys else { return data }
        if desiredKeys.isEmpty || data.isEmpty { return Data() }
        let wanted = Set(desiredKeys)
        return encode(try decode(data).filter { wanted.contains($0.key) })
    }

    /// Whether stored fields contain `pattern`, searched in place: each saved record's fields are, for
    /// the markers of assets and of deleteSelf references, and most records hold neither.
    ///
    /// Sixteen places at a time: a place is compared in full only where two of the pattern's bytes (its
    /// second and its last but one, letters in both markers, where their first and last are quotes) are
    /// where they would be. In sealed fields' base64 both are there by chance once in 4,096 places.
    static func contains(_ data: Data, _ pattern: [UInt8]) -> Bool {
        let length = pattern.count
        guard length > 0, data.count >= length else { return false }
        return data.withUnsafeBytes { bytes in
            pattern.withUnsafeBytes { pattern in
                func matches(at index: Int) -> Bool {
                    memcmp(bytes.baseAddress! + index, pattern.baseAddress!, length) == 0
                }
                var index = 0
                if length >= 3 {
                    let second = SIMD16<UInt8>(repeating: pattern[1])
                    let penultimate = SIMD16<UInt8>(repeating: pattern[length - 2])
                    // Each block's 16 places start at index; their bytes at 1 and at length - 2 are loaded.
                    while index + length - 2 + 16 <= bytes.count {
                        let seconds = bytes.loadUnaligned(fromByteOffset: index + 1, as: SIMD16<UInt8>.self)
                        let penultimates = bytes.loadUnaligned(
                            fromByteOffset: index + length - 2, as: SIMD16<UInt8>.self)
                        let candidates = (seconds .== second) .& (penultimates .== penultimate)
                        if any(candidates) {
                            for offset in 0..<16 where candidates[offset] && index + offset + length <= bytes.count {
                                if matches(at: index + offset) { return true }
                            }
                        }
                        index += 16
                    }
                }
                while index + length <= bytes.count {
                    if matches(at: index) { return true }
                    index += 1
                }
                return false
            }
        }
    }
}
