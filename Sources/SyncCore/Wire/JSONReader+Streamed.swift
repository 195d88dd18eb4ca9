import Foundation

extension JSONReader {
    /// A record modification read straight from its bytes, without building the tree first: the
    /// server's hottest body (400 saves a request), where allocating the tree, mapping it and freeing
    /// it cost more than the parse itself.
    ///
    /// It reads only the common shape, the request's, records' and field values' own members, each at
    /// most once, and gives up (`nil`) on anything else: then ``decode(_:from:)`` reads the body the
    /// tree's way, which accepts or explains exactly as before. What it reads itself it checks as the
    /// parser does (strings, numbers, nesting), and every value it does not map by itself (a
    /// reference, an asset, a list) it parses into the tree and maps with the tree's own functions.
    static func streamedModifyRecordsRequest(_ data: Data) -> ModifyRecordsRequest? {
        data.withUnsafeBytes { raw in
            var reader = StreamedReader(parser: Parser(bytes: raw.bindMemory(to: UInt8.self)))
            return reader.modifyRecordsRequest()
        }
    }

    /// A page of a zone's changes read straight from its bytes, under the same rule: the engine's hottest
    /// answer (up to 400 records a page in a first download), whose records are read as a modification's.
    static func streamedFetchZoneChangesResponse(_ data: Data) -> FetchZoneChangesResponse? {
        data.withUnsafeBytes { raw in
            var reader = StreamedReader(parser: Parser(bytes: raw.bindMemory(to: UInt8.self)))
            return reader.fetchZoneChangesResponse()
        }
    }

    /// The answer to a record modification read straight from its bytes, under the same rule: up to 400
    /// saved records an answer in an upload, read as a modification's records are.
    static func streamedModifyRecordsResponse(_ data: Data) -> ModifyRecordsResponse? {
        data.withUnsafeBytes { raw in
            var reader = StreamedReader(parser: Parser(bytes: raw.bindMemory(to: UInt8.self)))
            return reader.modifyRecordsResponse()
        }
    }
}

/// Reads a record modification, its answer, or a page of a zone's changes, member by member (see
/// ``JSONReader/streamedModifyRecordsRequest(_:)``, ``JSONReader/streamedModifyRecordsResponse(_:)`` and
/// ``JSONReader/streamedFetchZoneChangesResponse(_:)``).
/// Every `depth` is the nesting of the object or array being read, as the parser counts it, so that a
/// value parsed into the tree meets the same depth limit as in a whole-body parse.
private struct StreamedReader {
    var parser: JSONReader.Parser

    private static let requestKeys = [
        "saves", "deletes", "savePolicy", "atomic", "clientRequestID", "desiredKeys",
    ]
    private static let recordKeys = [
        "recordID", "recordType", "fields", "changedKeys", "recordChangeTag", "creationDate",
        "modificationDate", "creatorUserRecordName", "lastModifiedUserRecordName", "parent", "share",
    ]
    private static let recordIDKeys = ["recordName", "zoneID"]
    private static let zoneIDKeys = ["zoneName", "ownerName"]
    private static let fieldValueKeys = ["type", "value", "exact"]
    private static let pageKeys = ["modifications", "deletions", "changeToken", "moreComing"]
    private static let deletionKeys = ["recordID", "recordType"]
    private static let answerKeys = ["savedRecords", "failedRecordSaves", "deletedRecordIDs", "failedRecordDeletes"]

    mutating func modifyRecordsRequest() -> ModifyRecordsRequest? {
        var request = ModifyRecordsRequest()
        let read = object(depth: 1, keys: Self.requestKeys) { reader, member in
            switch member {
            case 0:
                guard let saves = reader.elements(depth: 2, { $0.record(depth: 3) }) else { return false }
                request.saves = saves
            case 1:
                guard let deletes = reader.elements(depth: 2, { $0.recordID(depth: 3) }) else { return false }
                request.deletes = deletes
            case 2:
                guard let name = reader.string(), let policy = SavePolicy(rawValue: name) else { return false }
                request.savePolicy = policy
            case 3:
                guard case .bool(let flag) = reader.parser.parseValue() else { return false }
                request.atomic = flag
            case 4:
                guard let text = reader.string() else { return false }
                request.clientRequestID = text
            default:
                guard let names = reader.parser.parseValue()?.array(of: JSONReader.string) else { return false }
                request.desiredKeys = names
            }
            return true
        }
        parser.skipWhitespace()
        return read && parser.index == parser.bytes.count ? request : nil
    }

    /// Every member is required, as the tree's mapping requires it.
    mutating func fetchZoneChangesResponse() -> FetchZoneChangesResponse? {
        var modifications: [RecordValue]?
        var deletions: [FetchZoneChangesResponse.Deletion]?
        var token: Data?
        var moreComing: Bool?
        let read = object(depth: 1, keys: Self.pageKeys) { reader, member in
            switch member {
            case 0:
                return found(&modifications, reader.elements(depth: 2) { $0.record(depth: 3) })
            case 1:
                return found(&deletions, reader.elements(depth: 2) { $0.deletion(depth: 3) })
            case 2:
                return found(&token, reader.string().flatMap { Data(base64Encoded: $0) })
            default:
                guard case .bool(let flag) = reader.parser.parseValue() else { return false }
                moreComing = flag
                return true
            }
        }
        parser.skipWhitespace()
        guard read, parser.index == parser.bytes.count, let modifications, let deletions, let token, let moreComing
        else { return nil }
        return FetchZoneChangesResponse(
            modifications: modifications, deletions: deletions, changeToken: ServerChangeToken(data: token),
            moreComing: moreComing)
    }

    /// Every member is required, as the tree's mapping requires it. The failures, few, are parsed into the tree
    /// and mapped with the tree's own function.
    mutating func modifyRecordsResponse() -> ModifyRecordsResponse? {
        var saved: [RecordValue]?
        var failedSaves: [(RecordValue.ID, SyncError)]?
        var deleted: [RecordValue.ID]?
        var failedDeletes: [(RecordValue.ID, SyncError)]?
        let read = object(depth: 1, keys: Self.answerKeys) { reader, member in
            switch member {
            case 0:
                return found(&saved, reader.elements(depth: 2) { $0.record(depth: 3) })
            case 1:
                return found(&failedSaves, reader.parser.parseValue()?.array(of: JSONReader.failure))
            case 2:
                return found(&deleted, reader.elements(depth: 2) { $0.recordID(depth: 3) })
            default:
                return found(&failedDeletes, reader.parser.parseValue()?.array(of: JSONReader.failure))
            }
        }
        parser.skipWhitespace()
        guard read, parser.index == parser.bytes.count, let saved, let failedSaves, let deleted, let failedDeletes
        else { return nil }
        return ModifyRecordsResponse(
            savedRecords: saved, failedRecordSaves: failedSaves.map { .init(recordID: $0.0, error: $0.1) },
            deletedRecordIDs: deleted, failedRecordDeletes: failedDeletes.map { .init(recordID: $0.0, error: $0.1) })
    }

    private mutating func deletion(depth: Int) -> FetchZoneChangesResponse.Deletion? {
        var id: RecordValue.ID?
        var type: String?
        let read = object(depth: depth, keys: Self.deletionKeys) { reader, member in
            member == 0 ? found(&id, reader.recordID(depth: depth + 1)) : found(&type, reader.string())
        }
        guard read, let id, let type else { return nil }
        return FetchZoneChangesResponse.Deletion(recordID: id, recordType: type)
    }

    private mutating func record(depth: Int) -> RecordValue? {
        var id: RecordValue.ID?
        var type: String?
        var fields: [String: FieldValue] = [:]
        var changedKeys = Set<String>()
        var tag: String?
        var created: Date?
        var modified: Date?
        var creator: String?
        var modifier: String?
        var parent: RecordValue.Reference?
        var share: RecordValue.Reference?
        let read = object(depth: depth, keys: Self.recordKeys) { reader, member in
            switch member {
            case 0:
                return found(&id, reader.recordID(depth: depth + 1))
            case 1:
                return found(&type, reader.string())
            case 2:
                guard let read = reader.fields(depth: depth + 1) else { return false }
                fields = read
            case 3:
                guard let keys = reader.parser.parseValue().flatMap(JSONReader.changedKeys) else { return false }
                changedKeys = keys
            case 4:
                return found(&tag, reader.string())
            case 5:
                return found(&created, reader.parser.parseValue().flatMap(JSONReader.date))
            case 6:
                return found(&modified, reader.parser.parseValue().flatMap(JSONReader.date))
            case 7:
                return found(&creator, reader.string())
            case 8:
                return found(&modifier, reader.string())
            case 9:
                return found(&parent, reader.parser.parseValue().flatMap(JSONReader.reference))
            default:
                return found(&share, reader.parser.parseValue().flatMap(JSONReader.reference))
            }
            return true
        }
        guard read, let id, let type else { return nil }
        var record = RecordValue(
            recordID: id, recordType: type, fields: fields, recordChangeTag: tag, creationDate: created,
            modificationDate: modified, creatorUserRecordID: creator.map(RecordValue.ID.init(userRecordName:)),
            lastModifiedUserRecordID: modifier.map(RecordValue.ID.init(userRecordName:)))
        record.changedKeys = changedKeys
        record.parent = parent
        record.share = share
        return record
    }

    private mutating func recordID(depth: Int) -> RecordValue.ID? {
        var name: String?
        var zone: RecordZone.ID?
        let read = object(depth: depth, keys: Self.recordIDKeys) { reader, member in
            if member == 0 {
                return found(&name, reader.string())
            }
            return found(&zone, reader.zoneID(depth: depth + 1))
        }
        guard read, let name, let zone else { return nil }
        return RecordValue.ID(recordName: name, zoneID: zone)
    }

    private mutating func zoneID(depth: Int) -> RecordZone.ID? {
        var name: String?
        var owner: String?
        let read = object(depth: depth, keys: Self.zoneIDKeys) { reader, member in
            if member == 0 {
                return found(&name, reader.string())
            }
            return found(&owner, reader.string())
        }
        guard read, let name else { return nil }
        return owner.map { RecordZone.ID(zoneName: name, ownerName: $0) } ?? RecordZone.ID(zoneName: name)
    }

    /// A record's fields: any names, each once, each a field value object.
    private mutating func fields(depth: Int) -> [String: FieldValue]? {
        guard consume(UInt8(ascii: "{")) else { return nil }
        var fields: [String: FieldValue] = [:]
        // Room for a typical record's fields at once, instead of growing by doubling from one.
        fields.reserveCapacity(8)
        parser.skipWhitespace()
        if consume(UInt8(ascii: "}")) { return fields }
        while true {
            parser.skipWhitespace()
            guard let name = string() else { return nil }
            parser.skipWhitespace()
            guard consume(UInt8(ascii: ":")), let value = fieldValue(depth: depth + 1),
                fields.updateValue(value, forKey: name) == nil
            else { return nil }
            parser.skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            return consume(UInt8(ascii: "}")) ? fields : nil
        }
    }

    private mutating func fieldValue(depth: Int) -> FieldValue? {
        parser.skipWhitespace()
        var type: String?
        var content: JSONReader.Value?
        var exact: JSONReader.Value?
        let read = object(depth: depth, keys: Self.fieldValueKeys) { reader, member in
            switch member {
            case 0:
                return found(&type, reader.string())
            case 1:
                return found(&content, reader.parser.parseValue())
            default:
                return found(&exact, reader.parser.parseValue())
            }
        }
        guard read, let type, let content else { return nil }
        return JSONReader.fieldValue(type: type, content: content, exact: exact)
    }

    // MARK: Structure

    /// Reads an object whose members are all among `keys`, none twice, calling `member` at each
    /// member's value with the key's place in `keys`; `false` when anything else is there.
    private mutating func object(
        depth: Int, keys: [String], _ member: (inout StreamedReader, Int) -> Bool
    ) -> Bool {
        parser.skipWhitespace()
        guard consume(UInt8(ascii: "{")) else { return false }
        parser.skipWhitespace()
        if consume(UInt8(ascii: "}")) { return true }
        var seen: UInt32 = 0
        while true {
            parser.skipWhitespace()
            guard let key = string(), let place = keys.firstIndex(of: key), seen & (1 << place) == 0 else {
                return false
            }
            seen |= 1 << place
            parser.skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { return false }
            parser.skipWhitespace()
            parser.depth = depth
            guard member(&self, place) else { return false }
            parser.skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            return consume(UInt8(ascii: "}"))
        }
    }

    /// Reads an array, calling `element` at each element.
    private mutating func array(depth: Int, _ element: (inout StreamedReader) -> Bool) -> Bool {
        guard consume(UInt8(ascii: "[")) else { return false }
        parser.skipWhitespace()
        if consume(UInt8(ascii: "]")) { return true }
        while true {
            parser.skipWhitespace()
            parser.depth = depth
            guard element(&self) else { return false }
            parser.skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            return consume(UInt8(ascii: "]"))
        }
    }

    /// An array whose every element `element` reads; `nil` when one is not what it reads.
    private mutating func elements<Element>(
        depth: Int, _ element: (inout StreamedReader) -> Element?
    ) -> [Element]? {
        var elements: [Element] = []
        let read = array(depth: depth) { reader in
            guard let value = element(&reader) else { return false }
            elements.append(value)
            return true
        }
        return read ? elements : nil
    }

    /// A string value (the parser's own reading: escapes, UTF-8); `nil` for anything else.
    private mutating func string() -> String? {
        guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "\"") else { return nil }
        return parser.parseString()
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard parser.index < parser.bytes.count, parser.bytes[parser.index] == byte else { return false }
        parser.index += 1
        return true
    }
}

/// Keeps a member's value as read; whether there was one (`false` gives the reading up).
private func found<Value>(_ slot: inout Value?, _ value: Value?) -> Bool {
    slot = value
    return value != nil
}
