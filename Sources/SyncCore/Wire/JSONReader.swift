import Foundation

/// Reads the wire format's hottest bodies (record modifications and zone changes) without
/// `JSONDecoder`, which spends most of a request's time on them.
///
/// The reader is strict: anything it does not fully understand makes it return `nil`, and the
/// caller falls back to `JSONDecoder`, which then either decodes the body or explains what is
/// wrong with it. So the reader only ever speeds up valid input; it never changes what is accepted.
public enum JSONReader {
    /// Decodes `type` from `data`: the fast reader first where it has one, `JSONDecoder` otherwise.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if let fast = fastDecode(type, from: data) { return fast }
        return try JSONDecoder().decode(T.self, from: data)
    }

    static func fastDecode<T>(_ type: T.Type, from data: Data) -> T? {
        let parsed = data.withUnsafeBytes { raw -> Value? in
            var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
            return parser.parseDocument()
        }
        guard let value = parsed else { return nil }
        switch type {
        case is ModifyRecordsRequest.Type: return modifyRecordsRequest(value) as? T
        case is ModifyRecordsResponse.Type: return modifyRecordsResponse(value) as? T
        case is FetchZoneChangesResponse.Type: return fetchZoneChangesResponse(value) as? T
        default: return nil
        }
    }

    // MARK: Mapping to wire types (mirrors their Codable conformances)

    private static func modifyRecordsRequest(_ value: Value) -> ModifyRecordsRequest? {
        guard case .object(let object) = value else { return nil }
        var request = ModifyRecordsRequest()
        if let saves = object.optional("saves") {
            guard let records = saves.array(of: record) else { return nil }
            request.saves = records
        }
        if let deletes = object.optional("deletes") {
            guard let ids = deletes.array(of: recordID) else { return nil }
            request.deletes = ids
        }
        if let policy = object.optional("savePolicy") {
            guard case .string(let name) = policy, let savePolicy = SavePolicy(rawValue: name) else { return nil }
            request.savePolicy = savePolicy
        }
        if let atomic = object.optional("atomic") {
            guard case .bool(let flag) = atomic else { return nil }
            request.atomic = flag
        }
        if let requestID = object.optional("clientRequestID") {
            guard case .string(let text) = requestID else { return nil }
            request.clientRequestID = text
        }
        return request
    }

    private static func modifyRecordsResponse(_ value: Value) -> ModifyRecordsResponse? {
        guard case .object(let object) = value,
            let saved = object.required("savedRecords")?.array(of: record),
            let deleted = object.required("deletedRecordIDs")?.array(of: recordID),
            let failedSaves = object.required("failedRecordSaves")?.array(of: { failure($0) }),
            let failedDeletes = object.required("failedRecordDeletes")?.array(of: { failure($0) })
        else { return nil }
        return ModifyRecordsResponse(
            savedRecords: saved,
            failedRecordSaves: failedSaves.map { .init(recordID: $0.0, error: $0.1) }, deletedRecordIDs: deleted,
            failedRecordDeletes: failedDeletes.map { .init(recordID: $0.0, error: $0.1) })
    }

    private static func fetchZoneChangesResponse(_ value: Value) -> FetchZoneChangesResponse? {
        guard case .object(let object) = value,
            let modifications = object.required("modifications")?.array(of: record),
            let deletions = object.required("deletions")?.array(of: { value -> FetchZoneChangesResponse.Deletion? in
                guard case .object(let deletion) = value, let id = deletion.required("recordID").flatMap(recordID),
                    case .string(let type) = deletion.required("recordType")
                else { return nil }
                return .init(recordID: id, recordType: type)
            }),
            case .string(let token) = object.required("changeToken"), let tokenData = Data(base64Encoded: token),
            case .bool(let moreComing) = object.required("moreComing")
        else { return nil }
        return FetchZoneChangesResponse(
            modifications: modifications, deletions: deletions, changeToken: ServerChangeToken(data: tokenData),
            moreComing: moreComing)
    }

    /// A per-item failure: its record ID and an error without a server record (others go the slow way).
    private static func failure(_ value: Value) -> (Record.ID, SyncError)? {
        guard case .object(let object) = value, let id = object.required("recordID").flatMap(recordID),
            case .object(let error) = object.required("error"), case .string(let code) = error.required("code"),
            case .string(let message) = error.required("message"), error.optional("serverRecord") == nil
        else { return nil }
        var retryAfter: Double?
        if let value = error.optional("retryAfter") {
            guard case .number(let text) = value, let seconds = Double(text) else { return nil }
            retryAfter = seconds
        }
        return (id, SyncError(SyncError.Code(rawValue: code), message, retryAfter: retryAfter))
    }

    private static func zoneID(_ value: Value) -> RecordZone.ID? {
        guard case .object(let object) = value, case .string(let name) = object.required("zoneName") else { return nil }
        guard let owner = object.optional("ownerName") else { return RecordZone.ID(zoneName: name) }
        guard case .string(let ownerName) = owner else { return nil }
        return RecordZone.ID(zoneName: name, ownerName: ownerName)
    }

    private static func recordID(_ value: Value) -> Record.ID? {
        guard case .object(let object) = value, case .string(let name) = object.required("recordName"),
            let zone = object.required("zoneID").flatMap(zoneID)
        else { return nil }
        return Record.ID(recordName: name, zoneID: zone)
    }

    private static func record(_ value: Value) -> Record? {
        guard case .object(let object) = value, let id = object.required("recordID").flatMap(recordID),
            case .string(let type) = object.required("recordType")
        else { return nil }
        var fields: [String: FieldValue] = [:]
        if let fieldsValue = object.optional("fields") {
            guard case .object(let members) = fieldsValue else { return nil }
            fields.reserveCapacity(members.count)
            for (key, member) in members {
                guard let field = fieldValue(member) else { return nil }
                fields[key] = field
            }
        }
        var record = Record(
            recordID: id, recordType: type, fields: fields, recordChangeTag: nil, creationDate: nil,
            modificationDate: nil, creatorUserRecordID: nil, lastModifiedUserRecordID: nil)
        if let keys = object.optional("changedKeys") {
            guard
                let names = keys.array(of: { value -> String? in
                    if case .string(let name) = value { return name }
                    return nil
                })
            else { return nil }
            for name in names { record[name] = fields[name] }
        }
        func optionalString(_ key: String) -> String?? {
            guard let value = object.optional(key) else { return .some(nil) }
            if case .string(let text) = value { return .some(text) }
            return nil
        }
        func optionalMilliseconds(_ key: String) -> Date?? {
            guard let value = object.optional(key) else { return .some(nil) }
            if case .number(let text) = value, let milliseconds = Int64(text) {
                return .some(Date(millisecondsSince1970: milliseconds))
            }
            return nil
        }
        guard let tag = optionalString("recordChangeTag"), let created = optionalMilliseconds("creationDate"),
            let modified = optionalMilliseconds("modificationDate"),
            let creator = optionalString("creatorUserRecordName"),
            let modifier = optionalString("lastModifiedUserRecordName")
        else { return nil }
        record.recordChangeTag = tag
        record.creationDate = created
        record.modificationDate = modified
        record.creatorUserRecordID = creator.map(Record.ID.init(userRecordName:))
        record.lastModifiedUserRecordID = modifier.map(Record.ID.init(userRecordName:))
        return record
    }

    private static func fieldValue(_ value: Value) -> FieldValue? {
        guard case .object(let object) = value, case .string(let type) = object.required("type"),
            let content = object.required("value")
        else { return nil }
        switch (type, content) {
        case ("string", .string(let text)): return .string(text)
        case ("int64", .number(let text)): return Int64(text).map(FieldValue.int64)
        case ("double", .number(let text)): return Double(text).map(FieldValue.double)
        case ("date", .number(let text)): return Int64(text).map { .date(Date(millisecondsSince1970: $0)) }
        case ("bytes", .string(let text)): return Data(base64Encoded: text).map(FieldValue.bytes)
        case ("reference", .object(let reference)):
            guard let id = reference.required("recordID").flatMap(recordID),
                case .string(let actionName) = reference.required("action"),
                let action = Record.Reference.Action(rawValue: actionName)
            else { return nil }
            return .reference(Record.Reference(recordID: id, action: action))
        case ("list", .array(let elements)):
            var values: [FieldValue] = []
            values.reserveCapacity(elements.count)
            for element in elements {
                guard let value = fieldValue(element) else { return nil }
                values.append(value)
            }
            return .list(values)
        default: return nil
        }
    }

    // MARK: The JSON tree and its parser

    indirect enum Value: Equatable {
        case object([(String, Value)])
        case array([Value])
        case string(String)
        /// The number's text, checked against JSON's grammar.
        case number(String)
        case bool(Bool)
        case null

        static func == (lhs: Value, rhs: Value) -> Bool {
            switch (lhs, rhs) {
            case (.null, .null): true
            case (.bool(let a), .bool(let b)): a == b
            case (.string(let a), .string(let b)), (.number(let a), .number(let b)): a == b
            case (.array(let a), .array(let b)): a == b
            case (.object(let a), .object(let b)): a.map(\.0) == b.map(\.0) && a.map(\.1) == b.map(\.1)
            default: false
            }
        }

        func array<T>(of transform: (Value) -> T?) -> [T]? {
            guard case .array(let elements) = self else { return nil }
            var result: [T] = []
            result.reserveCapacity(elements.count)
            for element in elements {
                guard let item = transform(element) else { return nil }
                result.append(item)
            }
            return result
        }
    }

    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var depth = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        mutating func parseDocument() -> Value? {
            guard let value = parseValue() else { return nil }
            skipWhitespace()
            return index == bytes.count ? value : nil
        }

        private mutating func skipWhitespace() {
            while index < bytes.count,
                bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D
                    || bytes[index] == 0x09
            {
                index += 1
            }
        }

        private mutating func parseValue() -> Value? {
            skipWhitespace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"): return parseObject()
            case UInt8(ascii: "["): return parseArray()
            case UInt8(ascii: "\""): return parseString().map(Value.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            default: return parseNumber()
            }
        }

        private mutating func literal(_ text: StaticString, _ value: Value) -> Value? {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else { return nil }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return nil }
            index += count
            return value
        }

        private mutating func parseObject() -> Value? {
            depth += 1
            defer { depth -= 1 }
            guard depth < 64 else { return nil }
            index += 1
            var members: [(String, Value)] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = parseString() else {
                    return nil
                }
                // Duplicate keys are left to JSONDecoder to judge.
                guard !members.contains(where: { $0.0 == key }) else { return nil }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                guard let value = parseValue() else { return nil }
                members.append((key, value))
                skipWhitespace()
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                } else {
                    return nil
                }
            }
        }

        private mutating func parseArray() -> Value? {
            depth += 1
            defer { depth -= 1 }
            guard depth < 64 else { return nil }
            index += 1
            var elements: [Value] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                guard let value = parseValue() else { return nil }
                elements.append(value)
                skipWhitespace()
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(elements)
                } else {
                    return nil
                }
            }
        }

        /// A string without escapes is taken as it is (if valid UTF-8); one with escapes goes to
        /// JSONDecoder, which handles every escape (they are rare in this API's bodies).
        private mutating func parseString() -> String? {
            index += 1
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") { return parseEscapedString(from: start - 1) }
                if byte < 0x20 { return nil }
                index += 1
            }
            return nil
        }

        private mutating func parseEscapedString(from quote: Int) -> String? {
            var end = quote + 1
            while end < bytes.count {
                if bytes[end] == UInt8(ascii: "\\") {
                    end += 2
                    continue
                }
                if bytes[end] == UInt8(ascii: "\"") { break }
                end += 1
            }
            guard end < bytes.count else { return nil }
            let literal = Data(UnsafeBufferPointer(rebasing: bytes[quote...end]))
            guard let text = try? JSONDecoder().decode(String.self, from: literal) else { return nil }
            index = end + 1
            return text
        }

        /// A number as JSON's grammar allows: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
        private mutating func parseNumber() -> Value? {
            let start = index
            func digits() -> Int {
                let first = index
                while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
                return index - first
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else if digits() == 0 {
                return nil
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { return nil }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits() > 0 else { return nil }
            }
            return .number(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
        }
    }
}

extension [(String, JSONReader.Value)] {
    /// The member's value; `nil` when absent or `null` (as `decodeIfPresent` treats them).
    func optional(_ key: String) -> JSONReader.Value? {
        guard let value = first(where: { $0.0 == key })?.1, value != .null else { return nil }
        return value
    }

    /// The member's value; `nil` when absent or `null` (a required member: the fast path gives up).
    func required(_ key: String) -> JSONReader.Value? {
        optional(key)
    }
}
