import Foundation
import SyncCore

/// The last server record a row's metadata keeps, written with SyncCore's `JSONWriter` (a record a row:
/// Foundation's `JSONEncoder` took a fifth of an upload's and a download's time) in the very shapes
/// `JSONDecoder` reads back: fields as on the wire, system fields as their `Codable` conformance has them
/// (dates as seconds since 2001).
enum MetadataCoding {
    /// The server fields a metadata row keeps, or nil for none (or a value no version wrote).
    static func serverFields(_ data: Data?) -> ServerFields? {
        data.flatMap { try? JSONDecoder().decode(ServerFields.self, from: $0) }
    }

    /// The system fields a metadata row keeps, or nil for none (or a value no version wrote).
    static func systemFields(_ data: Data?) -> RecordValue.SystemFields? {
        data.flatMap { try? JSONDecoder().decode(RecordValue.SystemFields.self, from: $0) }
    }

    static func encode(_ fields: ServerFields) -> Data {
        var writer = JSONWriter(capacity: 64 + 96 * (fields.plain.count + fields.encrypted.count))
        writer.raw("{\"plain\":")
        writer.fields(fields.plain)
        writer.raw(",\"encrypted\":")
        writer.fields(fields.encrypted)
        writer.raw(",\"blobDigests\":{")
        for (index, digest) in fields.blobDigests.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { writer.raw(",") }
            writer.string(digest.key)
            writer.raw(":")
            writer.string(digest.value)
        }
        writer.raw("}}")
        return Data(writer.bytes)
    }

    static func encode(_ system: RecordValue.SystemFields) -> Data {
        var writer = JSONWriter(capacity: 320)
        writer.raw("{\"recordID\":")
        writer.recordID(system.recordID)
        writer.raw(",\"recordType\":")
        writer.string(system.recordType)
        if let tag = system.recordChangeTag {
            writer.raw(",\"recordChangeTag\":")
            writer.string(tag)
        }
        for (key, date) in [("creationDate", system.creationDate), ("modificationDate", system.modificationDate)] {
            guard let date, date.timeIntervalSinceReferenceDate.isFinite else { continue }
            writer.raw(",\"\(key)\":".utf8)
            writer.raw(date.timeIntervalSinceReferenceDate.description.utf8)
        }
        for (key, id) in [
            ("creatorUserRecordID", system.creatorUserRecordID),
            ("lastModifiedUserRecordID", system.lastModifiedUserRecordID),
        ] {
            guard let id else { continue }
            writer.raw(",\"\(key)\":".utf8)
            writer.recordID(id)
        }
        for (key, reference) in [("parent", system.parent), ("share", system.share)] {
            guard let reference else { continue }
            writer.raw(",\"\(key)\":".utf8)
            writer.reference(reference)
        }
        if let version = system.sealedVersion {
            writer.raw(",\"sealedVersion\":")
            writer.raw(version.description.utf8)
        }
        writer.raw("}")
        return Data(writer.bytes)
    }
}
