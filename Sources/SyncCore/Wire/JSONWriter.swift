import Foundation

/// Writes the wire format's JSON directly into bytes, for the hot paths (records and their fields)
/// where `JSONEncoder` costs more than the rest of a request together.
///
/// The output is exactly what the `Codable` conformances produce, field order aside; tests check
/// that `JSONDecoder` reads it back to equal values.
public struct JSONWriter: Sendable {
    /// The JSON written so far, as UTF-8.
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends raw bytes that are already valid JSON.
    public mutating func raw(_ text: some Sequence<UInt8>) {
        bytes.append(contentsOf: text)
    }

    /// Appends raw ASCII punctuation or a literal.
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends a JSON string, escaped. Runs of bytes that need no escape are copied at once.
    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                escape(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): raw("\\\"")
        case UInt8(ascii: "\\"): raw("\\\\")
        case 0x0A: raw("\\n")
        case 0x0D: raw("\\r")
        case 0x09: raw("\\t")
        default:
            raw("\\u00")
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0xF)])
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `data` as a JSON string of base64, exactly as `data.base64EncodedString()` writes it (the
    /// standard alphabet, padded, no line breaks), without making that string first: records' encrypted
    /// values are most of the bytes an upload writes.
    public mutating func base64String(_ data: Data) {
        let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        let table = alphabet.utf8Start
        bytes.append(UInt8(ascii: "\""))
        data.withUnsafeBytes { input in
            let count = input.count
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (count + 2) / 3 * 4))
            bytes.withUnsafeMutableBufferPointer { output in
                var from = 0
                var to = start
                while from + 3 <= count {
                    let triple = UInt32(input[from]) << 16 | UInt32(input[from + 1]) << 8 | UInt32(input[from + 2])
                    output[to] = table[Int(triple >> 18)]
                    output[to + 1] = table[Int(triple >> 12 & 0x3F)]
                    output[to + 2] = table[Int(triple >> 6 & 0x3F)]
                    output[to + 3] = table[Int(triple & 0x3F)]
                    from += 3
                    to += 4
                }
                // One or two bytes left: two or three digits, and the padding already in place.
                if from < count {
                    let second = from + 1 < count ? UInt32(input[from + 1]) : 0
                    let pair = UInt32(input[from]) << 16 | second << 8
                    output[to] = table[Int(pair >> 18)]
                    output[to + 1] = table[Int(pair >> 12 & 0x3F)]
                    if from + 1 < count { output[to + 2] = table[Int(pair >> 6 & 0x3F)] }
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends an integer.
    public mutating func integer(_ value: Int64) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Appends a JSON array of `items`, each written by `element`.
    public mutating func array<S: Sequence>(_ items: S, _ element: (inout JSONWriter, S.Element) -> Void) {
        raw("[")
        var first = true
        for item in items {
            if !first { raw(",") }
            first = false
            element(&self, item)
        }
        raw("]")
    }

    /// Appends `"key":`.
    public mutating func key(_ name: StaticString) {
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        raw("\":")
    }

    /// Appends a zone ID object.
    public mutating func zoneID(_ zoneID: RecordZone.ID) {
        raw("{\"zoneName\":")
        string(zoneID.zoneName)
        raw(",\"ownerName\":")
        string(zoneID.ownerName)
        raw("}")
    }

    /// Appends a record ID object.
    public mutating func recordID(_ recordID: RecordValue.ID) {
        raw("{\"recordName\":")
        string(recordID.recordName)
        raw(",\"zoneID\":")
        zoneID(recordID.zoneID)
        raw("}")
    }

    /// Appends a field value object.
    public mutating func fieldValue(_ value: FieldValue) {
        raw("{\"type\":\"")
        raw(value.typeName.utf8)
        raw("\",\"value\":")
        switch value {
        case .string(let text): string(text)
        case .int64(let number): integer(number)
        case .double(let number): raw(number.description.utf8)
        case .date(let date):
            integer(date.millisecondsSince1970)
            // The exact value, so that the date comes back `==` to the one saved.
            if date.timeIntervalSinceReferenceDate.isFinite {
                raw(",\"exact\":")
                raw(date.timeIntervalSinceReferenceDate.description.utf8)
            }
        case .bytes(let data): base64String(data)
        case .encrypted(let data): base64String(data)
        case .reference(let reference): self.reference(reference)
        case .asset(let asset):
            raw("{\"assetID\":")
            string(asset.assetID)
            raw(",\"size\":")
            integer(asset.size)
            if let key = asset.key {
                raw(",\"key\":")
                base64String(key)
            }
            raw("}")
        case .list(let elements):
            array(elements) { $0.fieldValue($1) }
        }
        raw("}")
    }

    /// Appends a reference object.
    public mutating func reference(_ reference: RecordValue.Reference) {
        raw("{\"recordID\":")
        recordID(reference.recordID)
        raw(",\"action\":")
        string(reference.action.rawValue)
        raw("}")
    }

    /// Appends a fields object, keys sorted so that equal fields give equal bytes.
    public mutating func fields(_ fields: [String: FieldValue]) {
        raw("{")
        for (index, field) in fields.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { raw(",") }
            string(field.key)
            raw(":")
            fieldValue(field.value)
        }
        raw("}")
    }

    /// Appends a record whose fields are already JSON (as a store keeps them).
    public mutating func record(
        recordID: RecordValue.ID, recordType: String, rawFields: some Sequence<UInt8>, recordChangeTag: String?,
        creationDate: Int64?, modificationDate: Int64?, creatorUserRecordName: String?,
        lastModifiedUserRecordName: String?, changedKeys: Set<String> = [], parent: RecordValue.Reference? = nil,
        share: RecordValue.Reference? = nil
    ) {
        raw("{\"recordID\":")
        self.recordID(recordID)
        raw(",\"recordType\":")
        string(recordType)
        raw(",\"fields\":")
        raw(rawFields)
        if !changedKeys.isEmpty {
            raw(",\"changedKeys\":")
            array(changedKeys.sorted()) { $0.string($1) }
        }
        if let recordChangeTag {
            raw(",\"recordChangeTag\":")
            string(recordChangeTag)
        }
        if let creationDate {
            raw(",\"creationDate\":")
            integer(creationDate)
        }
        if let modificationDate {
            raw(",\"modificationDate\":")
            integer(modificationDate)
        }
        if let creatorUserRecordName {
            raw(",\"creatorUserRecordName\":")
            string(creatorUserRecordName)
        }
        if let lastModifiedUserRecordName {
            raw(",\"lastModifiedUserRecordName\":")
            string(lastModifiedUserRecordName)
        }
        if let parent {
            raw(",\"parent\":")
            reference(parent)
        }
        if let share {
            raw(",\"share\":")
            reference(share)
        }
        raw("}")
    }

    /// Appends a record.
    public mutating func record(_ record: RecordValue) {
        var fieldsWriter = JSONWriter(capacity: 256)
        fieldsWriter.fields(record.fields)
        self.record(record, rawFields: fieldsWriter.bytes)
    }

    /// Appends a record whose fields were written already, by ``fields(_:)``.
    public mutating func record(_ record: RecordValue, rawFields: some Sequence<UInt8>) {
        self.record(
            recordID: record.recordID, recordType: record.recordType, rawFields: rawFields,
            recordChangeTag: record.recordChangeTag, creationDate: record.creationDate?.millisecondsSince1970,
            modificationDate: record.modificationDate?.millisecondsSince1970,
            creatorUserRecordName: record.creatorUserRecordID?.recordName,
            lastModifiedUserRecordName: record.lastModifiedUserRecordID?.recordName, changedKeys: record.changedKeys,
            parent: record.parent, share: record.share)
    }

    /// Appends a whole record modification request: the body clients send most.
    public mutating func modifyRecordsRequest(_ request: ModifyRecordsRequest) {
        modifyRecordsRequest(request, savedFields: nil)
    }

    /// Appends a record modification request whose saves' fields were written already, one
    /// ``fields(_:)`` output per save (the server writes them once, to hash and to store).
    public mutating func modifyRecordsRequest(_ request: ModifyRecordsRequest, savedFields: [Data]?) {
        raw("{\"saves\":")
        if let savedFields, savedFields.count == request.saves.count {
            array(zip(request.saves, savedFields)) { $0.record($1.0, rawFields: $1.1) }
        } else {
            array(request.saves) { $0.record($1) }
        }
        raw(",\"deletes\":")
        array(request.deletes) { $0.recordID($1) }
        raw(",\"savePolicy\":")
        string(request.savePolicy.rawValue)
        raw(request.atomic ? ",\"atomic\":true" : ",\"atomic\":false")
        if let clientRequestID = request.clientRequestID {
            raw(",\"clientRequestID\":")
            string(clientRequestID)
        }
        if let desiredKeys = request.desiredKeys {
            raw(",\"desiredKeys\":")
            array(desiredKeys) { $0.string($1) }
        }
        raw("}")
    }

    /// Appends any `Encodable` value through `JSONEncoder`, for the cold parts of a body.
    public mutating func encodable(_ value: some Encodable) throws {
        bytes.append(contentsOf: try Self.sortedEncoder.encode(value))
    }

    /// Keys sorted: the same value always gives the same bytes (a replayed answer is the first, byte for byte).
    private static var sortedEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }
}
