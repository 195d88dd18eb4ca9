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

    public init(
        key: RecordKey, recordType: String, fields: Data, changeTag: String, createdAt: Int64, creator: String,
        modifiedAt: Int64, modifier: String, seq: Int64, isDeleted: Bool, writer: String = ""
    ) {
        self.writer = writer
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

    /// Writes the record as clients see it, splicing the stored fields JSON in unchanged.
    public func write(to writer: inout JSONWriter, in zoneID: RecordZone.ID) {
        writer.record(
            recordID: RecordValue.ID(recordName: key.recordName, zoneID: zoneID), recordType: recordType,
            rawFields: fields.isEmpty ? Data("{}".utf8) : fields, recordChangeTag: changeTag, creationDate: createdAt,
            modificationDate: modifiedAt, creatorUserRecordName: creator, lastModifiedUserRecordName: modifier)
    }

    /// The record as clients see it, under the given zone ID.
    public func record(in zoneID: RecordZone.ID) throws -> RecordValue {
        RecordValue(
            recordID: RecordValue.ID(recordName: key.recordName, zoneID: zoneID), recordType: recordType,
            fields: try FieldCoding.decode(fields), recordChangeTag: changeTag,
            creationDate: Date(millisecondsSince1970: createdAt),
            modificationDate: Date(millisecondsSince1970: modifiedAt),
            creatorUserRecordID: RecordValue.ID(userRecordName: creator),
            lastModifiedUserRecordID: RecordValue.ID(userRecordName: modifier))
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
}
