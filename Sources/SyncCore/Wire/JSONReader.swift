import Foundation

/// Reads the wire format's JSON: every request body on the server, every answer in the engine.
///
/// Reading is strict, and every failure names where in the body it is (`saves[0].fields.born.value:
/// …`) as a `DecodingError`, which the server answers as `invalidArguments`:
///
/// - the text must be JSON, nested at most ``maximumDepth`` arrays and objects deep, with no key
///   twice in one object;
/// - integers must be written as whole numbers within their type's range, and other numbers must
///   be finite (JSON's `1e999` would be infinity);
/// - the types' `Codable` conformances add their own rules (dates in range, no `null` where the
///   API does not allow it).
///
/// The hottest bodies (record modifications and zone changes) are mapped by hand, which is several
/// times faster than going through `Decodable`. The hand mapping gives up on anything unusual, and
/// the `Decodable` path then either decodes the body or explains what is wrong with it: so the hand
/// mapping only ever speeds up valid input; it never changes what is accepted. A record
/// modification, the server's hottest, and a page of a zone's changes, the engine's, are first read
/// straight from their bytes without the tree (``streamedModifyRecordsRequest(_:)``,
/// ``streamedFetchZoneChangesResponse(_:)``), under the same rule.
public enum JSONReader {
    /// The deepest nesting of arrays and objects accepted. The API's deepest body (a reference
    /// inside a list inside a record inside a request) is about ten levels deep.
    public static let maximumDepth = 64

    /// Decodes `type` from `data`.
    /// - Throws: `DecodingError` whose coding path names the offending member.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if type == ModifyRecordsRequest.self, let request = streamedModifyRecordsRequest(data) as? T {
            return request
        }
        if type == FetchZoneChangesResponse.self, let page = streamedFetchZoneChangesResponse(data) as? T {
            return page
        }
        if type == ModifyRecordsResponse.self, let answer = streamedModifyRecordsResponse(data) as? T {
            return answer
        }
        return try decodeFromTree(type, from: data)
    }

    /// Decodes `type` from the parsed tree: by hand where mapped, else through `Decodable`.
    static func decodeFromTree<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let value = try parse(data)
        if let fast = fastDecode(type, from: value) { return fast }
        return try JSONValueDecoder.decode(T.self, from: value, at: [])
    }

    /// Parses JSON text into a tree.
    /// - Throws: `DecodingError.dataCorrupted` for text that is not JSON, nests too deep or repeats a key.
    public static func parse(_ data: Data) throws -> Value {
        try data.withUnsafeBytes { raw -> Value in
            var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
            if let value = parser.parseDocument() { return value }
            throw parser.error()
        }
    }

    /// The hand mapping alone, for tests: `nil` when it gives up (or the text is not JSON).
    static func fastDecode<T>(_ type: T.Type, from data: Data) -> T? {
        guard let value = try? parse(data) else { return nil }
        return fastDecode(type, from: value)
    }

    private static func fastDecode<T>(_ type: T.Type, from value: Value) -> T? {
        switch type {
        case is ModifyRecordsRequest.Type: return modifyRecordsRequest(value) as? T
        case is ModifyRecordsResponse.Type: return modifyRecordsResponse(value) as? T
        case is FetchZoneChangesResponse.Type: return fetchZoneChangesResponse(value) as? T
        case is [String: FieldValue].Type: return fields(value) as? T
        case is FieldValue.Type: return fieldValue(value) as? T
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
        if let keys = object.optional("desiredKeys") {
            guard let names = keys.array(of: string) else { return nil }
            request.desiredKeys = names
        }
        return request
    }

    static func string(_ value: Value) -> String? {
        if case .string(let text) = value { return text }
        return nil
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

    /// A per-item failure: its record ID and an error without a server record or settings (others
    /// go the slow way).
    static func failure(_ value: Value) -> (RecordValue.ID, SyncError)? {
        guard case .object(let object) = value, let id = object.required("recordID").flatMap(recordID),
            case .object(let error) = object.required("error"), case .string(let code) = error.required("code"),
            case .string(let message) = error.required("message"), error.optional("serverRecord") == nil,
            error.optional("serverEncryptionSettings") == nil
        else { return nil }
        var retryAfter: Double?
        if let value = error.optional("retryAfter") {
            guard case .number(let text) = value, let seconds = Double(text), SyncError.isValid(retryAfter: seconds)
            else { return nil }
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

    private static func recordID(_ value: Value) -> RecordValue.ID? {
        guard case .object(let object) = value, case .string(let name) = object.required("recordName"),
            let zone = object.required("zoneID").flatMap(zoneID)
        else { return nil }
        return RecordValue.ID(recordName: name, zoneID: zone)
    }

    private static func record(_ value: Value) -> RecordValue? {
        guard case .object(let object) = value, let id = object.required("recordID").flatMap(recordID),
            case .string(let type) = object.required("recordType")
        else { return nil }
        var fields: [String: FieldValue] = [:]
        if let fieldsValue = object.optional("fields") {
            guard let decoded = Self.fields(fieldsValue) else { return nil }
            fields = decoded
        }
        var changedKeys = Set<String>()
        if let keys = object.optional("changedKeys") {
            guard let names = Self.changedKeys(keys) else { return nil }
            changedKeys = names
        }
        var record = RecordValue(
            recordID: id, recordType: type, fields: fields, recordChangeTag: nil, creationDate: nil,
            modificationDate: nil, creatorUserRecordID: nil, lastModifiedUserRecordID: nil)
        record.changedKeys = changedKeys
        func optionalString(_ key: String) -> String?? {
            guard let value = object.optional(key) else { return .some(nil) }
            if case .string(let text) = value { return .some(text) }
            return nil
        }
        func optionalMilliseconds(_ key: String) -> Date?? {
            guard let value = object.optional(key) else { return .some(nil) }
            return date(value).map { .some($0) }
        }
        func optionalReference(_ key: String) -> RecordValue.Reference?? {
            guard let value = object.optional(key) else { return .some(nil) }
            return Self.reference(value).map { .some($0) }
        }
        guard let tag = optionalString("recordChangeTag"), let created = optionalMilliseconds("creationDate"),
            let modified = optionalMilliseconds("modificationDate"),
            let creator = optionalString("creatorUserRecordName"),
            let modifier = optionalString("lastModifiedUserRecordName"), let parent = optionalReference("parent"),
            let share = optionalReference("share")
        else { return nil }
        record.parent = parent
        record.share = share
        record.recordChangeTag = tag
        record.creationDate = created
        record.modificationDate = modified
        record.creatorUserRecordID = creator.map(RecordValue.ID.init(userRecordName:))
        record.lastModifiedUserRecordID = modifier.map(RecordValue.ID.init(userRecordName:))
        return record
    }

    /// A record's `changedKeys`: strings, none twice.
    static func changedKeys(_ value: Value) -> Set<String>? {
        guard let names = value.array(of: string) else { return nil }
        let keys = Set(names)
        // A key listed twice goes the slow way, which explains the mistake.
        return keys.count == names.count ? keys : nil
    }

    /// A record's date: whole milliseconds since 1970, in range.
    static func date(_ value: Value) -> Date? {
        guard case .number(let text) = value, let milliseconds = Int64(text) else { return nil }
        return Date(checkedMillisecondsSince1970: milliseconds)
    }

    /// A reference object: a record ID and a delete action.
    static func reference(_ value: Value) -> RecordValue.Reference? {
        guard case .object(let reference) = value, let id = reference.required("recordID").flatMap(recordID),
            case .string(let actionName) = reference.required("action"),
            let action = RecordValue.Reference.Action(rawValue: actionName)
        else { return nil }
        return RecordValue.Reference(recordID: id, action: action)
    }

    /// A record's fields object (also how the server stores them).
    private static func fields(_ value: Value) -> [String: FieldValue]? {
        guard case .object(let members) = value else { return nil }
        var fields: [String: FieldValue] = [:]
        fields.reserveCapacity(members.count)
        for (key, member) in members {
            guard let field = fieldValue(member) else { return nil }
            fields[key] = field
        }
        return fields
    }

    private static func fieldValue(_ value: Value) -> FieldValue? {
        guard case .object(let object) = value, case .string(let type) = object.required("type"),
            let content = object.required("value")
        else { return nil }
        return fieldValue(type: type, content: content, exact: object.optional("exact"))
    }

    /// A field value from its members: its type's name, its `value`, and a date's `exact` seconds.
    static func fieldValue(type: String, content: Value, exact exactValue: Value?) -> FieldValue? {
        switch (type, content) {
        case ("string", .string(let text)): return .string(text)
        case ("int64", .number(let text)): return Int64(text).map(FieldValue.int64)
        case ("double", .number(let text)):
            guard let number = Double(text), number.isFinite else { return nil }
            return .double(number)
        case ("date", .number(let text)):
            guard let milliseconds = Int64(text) else { return nil }
            var exact: Double?
            if let exactValue {
                guard case .number(let exactText) = exactValue, let seconds = Double(exactText) else { return nil }
                exact = seconds
            }
            return Date(wireMilliseconds: milliseconds, exact: exact).map(FieldValue.date)
        case ("bytes", .string(let text)): return Data(base64Encoded: text).map(FieldValue.bytes)
        case ("encrypted", .string(let text)):
            // Empty ciphertext goes the slow way, which explains the refusal.
            guard let data = Data(base64Encoded: text), !data.isEmpty else { return nil }
            return .encrypted(data)
        case ("reference", .object):
            return reference(content).map(FieldValue.reference)
        case ("asset", .object(let members)):
            // Anything unusual goes the slow way, which explains the refusal.
            guard members.count <= 3, case .string(let id) = members.required("assetID"),
                case .number(let sizeText) = members.required("size"), let size = Int64(sizeText)
            else { return nil }
            var key: Data?
            if let keyValue = members.optional("key") {
                guard case .string(let text) = keyValue, let data = Data(base64Encoded: text) else { return nil }
                key = data
            }
            let asset = AssetReference(assetID: id, size: size, key: key)
            return asset.problem == nil ? .asset(asset) : nil
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

    /// A parsed JSON value. Not `indirect`: arrays already hold their elements out of line, and
    /// boxing every string and number would cost an allocation per value. Public for hand mappings of
    /// small JSON values elsewhere (a contact's lists inside a string field).
    public enum Value: Equatable, Sendable {
        case object([(String, Value)])
        case array([Value])
        case string(String)
        /// The number's text, checked against JSON's grammar.
        case number(String)
        case bool(Bool)
        case null

        public static func == (lhs: Value, rhs: Value) -> Bool {
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
        /// Why parsing stopped, when the reason is not a plain syntax error.
        enum Failure {
            case tooDeep
            /// The last key of the path appears twice in its object.
            case duplicateKey
        }

        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var depth = 0
        var failure: Failure?
        /// Where the failure is, innermost first: filled in while the recursion unwinds, so that
        /// a successful parse pays nothing for it.
        var failurePath: [JSONKey] = []

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        mutating func parseDocument() -> Value? {
            guard let value = parseValue() else { return nil }
            skipWhitespace()
            return index == bytes.count ? value : nil
        }

        /// The error for a parse that returned `nil`.
        func error() -> DecodingError {
            let path = Array(failurePath.reversed())
            switch failure {
            case .tooDeep:
                return .dataCorrupted(
                    .init(
                        codingPath: path,
                        debugDescription:
                            "nested deeper than \(JSONReader.maximumDepth) arrays and objects; no request of this API nests that deep"
                    ))
            case .duplicateKey:
                return .dataCorrupted(
                    .init(codingPath: path, debugDescription: "appears twice in one object; send each key once"))
            case nil:
                let what = bytes.isEmpty ? "the body is empty" : "at byte \(min(index, bytes.count))"
                return .dataCorrupted(
                    .init(codingPath: [], debugDescription: "The given data was not valid JSON (\(what))."))
            }
        }

        mutating func skipWhitespace() {
            while index < bytes.count,
                bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D
                    || bytes[index] == 0x09
            {
                index += 1
            }
        }

        mutating func parseValue() -> Value? {
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
            guard depth <= JSONReader.maximumDepth else {
                failure = .tooDeep
                return nil
            }
            index += 1
            var members: [(String, Value)] = []
            // Keys seen, once the object is too large for a linear search to stay cheap (a
            // record's fields can number tens of thousands).
            var keys: Set<String>?
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
                // A repeated key would make the body mean different things to different readers.
                let repeated: Bool
                if let inserted = keys?.insert(key).inserted {
                    repeated = !inserted
                } else if members.count < 16 {
                    repeated = members.contains { $0.0 == key }
                } else {
                    var seen = Set(members.map(\.0))
                    repeated = !seen.insert(key).inserted
                    keys = seen
                }
                guard !repeated else {
                    failure = .duplicateKey
                    failurePath.append(JSONKey(stringValue: key))
                    return nil
                }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                guard let value = parseValue() else {
                    if failure != nil { failurePath.append(JSONKey(stringValue: key)) }
                    return nil
                }
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
            guard depth <= JSONReader.maximumDepth else {
                failure = .tooDeep
                return nil
            }
            index += 1
            var elements: [Value] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                guard let value = parseValue() else {
                    if failure != nil { failurePath.append(JSONKey(index: elements.count)) }
                    return nil
                }
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
        mutating func parseString() -> String? {
            index += 1
            let start = index
            var isASCII = true
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    index += 1
                    // ASCII is valid UTF-8 as it is, and `String(decoding:)` is much the faster;
                    // anything else must be valid UTF-8, not repaired.
                    return isASCII ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
                }
                if byte == UInt8(ascii: "\\") { return parseEscapedString(from: start - 1) }
                if byte < 0x20 { return nil }
                if byte >= 0x80 { isASCII = false }
                index += 1
            }
            return nil
        }

        /// A string with escapes, from its opening quote: unescaped into bytes as JSONDecoder does (lone
        /// surrogates and unknown escapes are refused), then checked as UTF-8.
        private mutating func parseEscapedString(from quote: Int) -> String? {
            var output: [UInt8] = []
            output.reserveCapacity(64)
            var position = quote + 1
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    index = position + 1
                    return String(validating: output, as: UTF8.self)
                }
                if byte < 0x20 { return nil }
                guard byte == UInt8(ascii: "\\") else {
                    output.append(byte)
                    position += 1
                    continue
                }
                guard position + 1 < bytes.count else { return nil }
                let escape = bytes[position + 1]
                position += 2
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"):
                    guard let unit = hexUnit(at: position) else { return nil }
                    position += 4
                    var scalar = unit
                    if (0xD800...0xDBFF).contains(unit) {
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u"), let low = hexUnit(at: position + 2),
                            (0xDC00...0xDFFF).contains(low)
                        else { return nil }
                        position += 6
                        scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(unit) {
                        return nil
                    }
                    guard let character = Unicode.Scalar(scalar) else { return nil }
                    output.append(contentsOf: UTF8.encode(character)!)
                default: return nil
                }
            }
            return nil
        }

        /// Four hex digits at `position` (a `\\u` escape's), as a number.
        private func hexUnit(at position: Int) -> UInt32? {
            guard position + 4 <= bytes.count else { return nil }
            var unit: UInt32 = 0
            for byte in bytes[position..<position + 4] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                unit = unit << 4 | UInt32(digit)
            }
            return unit
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
    /// The member's value, `nil` when absent. A `null` is returned as it is: no pattern the hand
    /// mapping matches accepts it, so it gives up and the `Decodable` path explains the mistake.
    public func optional(_ key: String) -> JSONReader.Value? {
        first(where: { $0.0 == key })?.1
    }

    /// The member's value; `nil` when absent (a required member: the hand mapping gives up).
    func required(_ key: String) -> JSONReader.Value? {
        optional(key)
    }
}
