import Foundation
import Testing

@testable import SyncCore

@Suite("JSONReader agrees with JSONDecoder")
struct JSONReaderTests {
    private static func sampleRecord(_ name: String) -> RecordValue {
        var record = RecordValue(
            recordType: "Contact",
            recordID: RecordValue.ID(recordName: name, zoneID: RecordZone.ID(zoneName: "Contacts", ownerName: "_o")))
        record["name"] = .string("Zoë \"Q\" \\ 张伟 👩🏽‍💻\n")
        record["age"] = .int64(-42)
        record["score"] = .double(0.1)
        record["born"] = .date(Date(millisecondsSince1970: 1_700_000_000_123))
        record["photo"] = .bytes(Data([0, 1, 254, 255]))
        record["friend"] = .reference(RecordValue.Reference(recordID: record.recordID))
        record["tags"] = .list([.string("a"), .string("b")])
        record["portrait"] = .asset(
            AssetReference(assetID: "0123456789abcdef0123456789abcdef", size: 52_311, key: Data([9, 8, 7])))
        record["gallery"] = .list([.asset(AssetReference(assetID: "fedcba9876543210fedcba9876543210", size: 1))])
        record.recordChangeTag = "k3"
        record.creationDate = Date(millisecondsSince1970: 5)
        record.creatorUserRecordID = RecordValue.ID(userRecordName: "_creator")
        return record
    }

    static let validBodies: [String] = {
        var request = JSONWriter()
        request.modifyRecordsRequest(
            ModifyRecordsRequest(
                saves: [sampleRecord("a"), sampleRecord("b\u{1}")], deletes: [sampleRecord("c").recordID],
                savePolicy: .changedKeys, atomic: true, clientRequestID: "r1", desiredKeys: ["name", "age"]))
        var response = JSONWriter()
        response.raw("{\"savedRecords\":[")
        response.record(sampleRecord("a"))
        response.raw(
            "],\"failedRecordSaves\":[{\"recordID\":{\"recordName\":\"x\",\"zoneID\":{\"zoneName\":\"Z\"}},\"error\":{\"code\":\"zoneNotFound\",\"message\":\"gone\",\"retryAfter\":1.5}}],\"deletedRecordIDs\":[],\"failedRecordDeletes\":[]}"
        )
        return [
            String(decoding: request.bytes, as: UTF8.self),
            String(decoding: response.bytes, as: UTF8.self),
            #"{"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z"}},"recordType":"C"}]}"#,
            #" { "saves" : [ ] , "deletes" : [ ] } "#,
            #"{"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z"}},"recordType":"C","fields":{"n":{"type":"double","value":1}}}]}"#,
            #"{"modifications":[],"deletions":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z"}},"recordType":"C"}],"changeToken":"AAE=","moreComing":true}"#,
        ]
    }()

    /// Checks every fast path on `text`; returns how many accepted it.
    @discardableResult
    private func check(_ text: String) -> Int {
        let data = Data(text.utf8)
        return [
            checkType(ModifyRecordsRequest.self, data), checkType(ModifyRecordsResponse.self, data),
            checkType(FetchZoneChangesResponse.self, data), checkStreamed(data), checkStreamedPage(data),
            checkStreamedAnswer(data),
        ].filter { $0 }.count
    }

    /// Whatever a streamed reading (of a record modification, or of a page of a zone's changes) returns must be
    /// exactly what the tree's reading returns (which the checks above hold to JSONDecoder); returns whether it
    /// read the body.
    @discardableResult
    private func checkStreamed<T: Decodable & Equatable>(_ data: Data, _ read: (Data) -> T?) -> Bool {
        guard let streamed = read(data) else { return false }
        let tree = try? JSONReader.decodeFromTree(T.self, from: data)
        #expect(tree == streamed, "streamed reading disagrees on \(String(decoding: data, as: UTF8.self))")
        return true
    }

    /// Each body is read straight from its bytes by `read`, and ``JSONReader/decode(_:from:)`` gives what
    /// JSONDecoder gives.
    private func checkStreamsAll<T: Decodable & Equatable>(_ bodies: [String], _ read: (Data) -> T?) throws {
        for body in bodies {
            let data = Data(body.utf8)
            let streamed = checkStreamed(data, read)
            #expect(streamed, "the streamed reading gave up on \(body)")
            #expect(try JSONReader.decode(T.self, from: data) == JSONDecoder().decode(T.self, from: data))
        }
    }

    private func checkStreamed(_ data: Data) -> Bool { checkStreamed(data, JSONReader.streamedModifyRecordsRequest) }
    private func checkStreamedPage(_ data: Data) -> Bool {
        checkStreamed(data, JSONReader.streamedFetchZoneChangesResponse)
    }
    private func checkStreamedAnswer(_ data: Data) -> Bool {
        checkStreamed(data, JSONReader.streamedModifyRecordsResponse)
    }

    /// Whatever the fast path returns must be exactly what JSONDecoder returns.
    @discardableResult
    private func checkType<T: Decodable & Equatable>(_ type: T.Type, _ data: Data) -> Bool {
        guard let fast = JSONReader.fastDecode(type, from: data) else { return false }
        let slow = try? JSONDecoder().decode(type, from: data)
        #expect(slow == fast, "fast path disagrees on \(String(decoding: data, as: UTF8.self))")
        return true
    }

    @Test("valid bodies take the fast path and decode the same", arguments: validBodies)
    func validBodiesAgree(body: String) {
        let data = Data(body.utf8)
        let decoded =
            JSONReader.fastDecode(ModifyRecordsRequest.self, from: data) != nil
            || JSONReader.fastDecode(ModifyRecordsResponse.self, from: data) != nil
            || JSONReader.fastDecode(FetchZoneChangesResponse.self, from: data) != nil
        #expect(decoded, "the fast path gave up on a valid body")
        check(body)
    }

    @Test("valid record modifications are read straight from their bytes, as the tree reads them")
    func validRequestsStream() throws {
        try checkStreamsAll(
            Self.validBodies.filter { $0.contains("\"saves\"") }, JSONReader.streamedModifyRecordsRequest)
    }

    @Test("pages of a zone's changes, as the server writes them, are read straight from their bytes")
    func validPagesStream() throws {
        var page = JSONWriter()
        page.raw("{\"modifications\":[")
        page.record(Self.sampleRecord("a"))
        page.raw(",")
        page.record(Self.sampleRecord("b\u{1}"))
        page.raw(
            "],\"deletions\":[{\"recordID\":{\"recordName\":\"c\",\"zoneID\":{\"zoneName\":\"Z\",\"ownerName\":\"_o\"}},\"recordType\":\"Contact\"}],\"changeToken\":\"AAEC\",\"moreComing\":false}"
        )
        try checkStreamsAll(
            [String(decoding: page.bytes, as: UTF8.self)] + Self.validBodies.filter { $0.contains("modifications") },
            JSONReader.streamedFetchZoneChangesResponse)
        // Anything it does not know, it leaves to the tree, which says what is wrong or reads it.
        for body in [
            #"{"modifications":[],"deletions":[],"changeToken":"AAE=","moreComing":true,"moreComing":false}"#,
            #"{"modifications":[],"deletions":[],"changeToken":"AAE="}"#,
            #"{"modifications":[],"deletions":[],"changeToken":"not base64!","moreComing":true}"#,
            #"{"modifications":[],"deletions":[],"changeToken":"AAE=","moreComing":true,"extra":1}"#,
            #"{"modifications":[],"deletions":[],"changeToken":"AAE=","moreComing":true} x"#,
        ] {
            #expect(JSONReader.streamedFetchZoneChangesResponse(Data(body.utf8)) == nil, "read \(body)")
        }
    }

    @Test("answers to a record modification, as the server writes them, are read straight from their bytes")
    func validAnswersStream() throws {
        // As an upload's answer is: the saved records with their system fields, no fields (desiredKeys empty).
        var answer = JSONWriter()
        answer.raw("{\"savedRecords\":[")
        for (index, name) in ["a", "b\u{1}"].enumerated() {
            var saved = RecordValue(recordType: "Contact", recordID: Self.sampleRecord(name).recordID)
            saved.recordChangeTag = "t\(index)"
            saved.creationDate = Date(millisecondsSince1970: 5)
            saved.modificationDate = Date(millisecondsSince1970: 1_700_000_000_000 + Int64(index))
            saved.creatorUserRecordID = RecordValue.ID(userRecordName: "_creator")
            if index > 0 { answer.raw(",") }
            answer.record(saved)
        }
        answer.raw(
            "],\"failedRecordSaves\":[],\"deletedRecordIDs\":[{\"recordName\":\"c\",\"zoneID\":{\"zoneName\":\"Z\"}}],\"failedRecordDeletes\":[{\"recordID\":{\"recordName\":\"d\",\"zoneID\":{\"zoneName\":\"Z\"}},\"error\":{\"code\":\"unknownItem\",\"message\":\"no record d\"}}]}"
        )
        try checkStreamsAll(
            [String(decoding: answer.bytes, as: UTF8.self)] + Self.validBodies.filter { $0.contains("savedRecords") },
            JSONReader.streamedModifyRecordsResponse)
        // Anything it does not know, it leaves to the tree, which says what is wrong or reads it: a member twice or
        // missing or unknown, bytes after the end, and a failure carrying the server's record.
        let empty = #""failedRecordSaves":[],"deletedRecordIDs":[],"failedRecordDeletes":[]"#
        let withServerRecord =
            #"{"savedRecords":[],"failedRecordSaves":[{"recordID":{"recordName":"x","zoneID":{"zoneName":"Z"}},"error":{"code":"serverRecordChanged","message":"newer","serverRecord":{"recordID":{"recordName":"x","zoneID":{"zoneName":"Z"}},"recordType":"C"}}}],"deletedRecordIDs":[],"failedRecordDeletes":[]}"#
        for body in [
            #"{"savedRecords":[],"savedRecords":[],"# + empty + "}", #"{"savedRecords":[]}"#,
            #"{"savedRecords":[],"extra":1,"# + empty + "}", #"{"savedRecords":[],"# + empty + "} x",
            withServerRecord,
        ] {
            #expect(JSONReader.streamedModifyRecordsResponse(Data(body.utf8)) == nil, "read \(body)")
        }
        // The tree reads the one that is valid as before.
        #expect(
            try JSONReader.decode(ModifyRecordsResponse.self, from: Data(withServerRecord.utf8))
                == JSONDecoder().decode(ModifyRecordsResponse.self, from: Data(withServerRecord.utf8)))
    }

    @Test(
        "a key twice at any level, or nesting past the limit, is refused as the whole-body parse refuses it",
        arguments: [
            #"{"atomic":true,"atomic":false}"#,
            #"{"saves":[{"recordID":{"recordName":"a","recordName":"b","zoneID":{"zoneName":"Z"}},"recordType":"C"}]}"#,
            #"{"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z","zoneName":"Y"}},"recordType":"C"}]}"#,
            #"{"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z"}},"recordType":"C","recordType":"D"}]}"#,
            #"{"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z"}},"recordType":"C","fields":{"n":{"type":"int64","value":1},"n":{"type":"int64","value":2}}}]}"#,
            #"{"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z"}},"recordType":"C","fields":{"n":{"type":"int64","type":"string","value":1}}}]}"#,
            #"{"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z"}},"recordType":"C","fields":{"n":{"type":"list","value":[{"type":"int64","value":1,"value":2}]}}}]}"#,
            #"{"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z"}},"recordType":"C","fields":{"n":{"type":"list","value":"#
                + String(repeating: "[", count: 60) + String(repeating: "]", count: 60) + "}}}]}",
        ])
    func refusalsStayTheSame(body: String) {
        let data = Data(body.utf8)
        #expect(JSONReader.streamedModifyRecordsRequest(data) == nil)
        var whole: String?
        do { _ = try JSONReader.parse(data) } catch { whole = "\(error)" }
        var read: String?
        do { _ = try JSONReader.decode(ModifyRecordsRequest.self, from: data) } catch { read = "\(error)" }
        #expect(whole != nil, "the whole-body parse accepted \(body)")
        #expect(read == whole)
    }

    @Test("a sealed field's plaintext (one field value) takes the fast path and decodes the same")
    func fieldValuesAgree() {
        for (key, value) in Self.sampleRecord("a").fields.sorted(by: { $0.key < $1.key }) {
            var writer = JSONWriter()
            writer.fieldValue(value)
            let data = Data(writer.bytes)
            #expect(JSONReader.fastDecode(FieldValue.self, from: data) == value, "field \(key)")
            #expect(checkType(FieldValue.self, data), "the fast path gave up on field \(key)")
        }
    }

    @Test(
        "escaped strings read as JSONDecoder reads them, refusals included",
        arguments: [
            #""\ud83d\ude00 \u00E9\u00e9""#, #""a\u0000b""#, #""\/\b\f\n\r\t\"\\""#, #""\"Zoë\" 张伟""#,
            #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\ud800\""#, #""\x""#, #""\U0041""#, #""\u00G1""#,
            #""\u12""#, #""\"#, "\"\\n\u{1}\"", "\"\\n\u{7F}\"",
        ])
    func escapedStrings(text: String) {
        let data = Data(text.utf8)
        let expected = try? JSONDecoder().decode(String.self, from: data)
        let read = try? JSONReader.decode(String.self, from: data)
        #expect(read == expected, "\(text)")
        var invalidUTF8 = Data(#""\n"#.utf8)
        invalidUTF8.append(contentsOf: [0xC3, 0x28, UInt8(ascii: "\"")])
        #expect((try? JSONReader.decode(String.self, from: invalidUTF8)) == nil)
    }

    @Test("10,000 mangled bodies: the fast path either gives up or agrees with JSONDecoder")
    func mangledBodiesAgree() {
        var state: UInt64 = 7
        func random(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var accepted = 0
        let alphabet = Array(#"{}[]",:.-+eE0123456789aZnulltrue\"u00e9 "#.utf8) + [0, 0x1F, 0xFF, 0xC3, 0xA9]
        for _ in 0..<10_000 {
            var bytes = Array(Self.validBodies[random(Self.validBodies.count)].utf8)
            for _ in 0..<(1 + random(3)) where !bytes.isEmpty {
                let position = random(bytes.count)
                switch random(3) {
                case 0: bytes.remove(at: position)
                case 1: bytes.insert(alphabet[random(alphabet.count)], at: position)
                default: bytes[position] = alphabet[random(alphabet.count)]
                }
            }
            accepted += check(String(decoding: bytes, as: UTF8.self))
        }
        // Many mangled bodies stay valid (a changed letter in a string): the comparison was exercised.
        #expect(accepted > 1000, "only \(accepted) mangled bodies took the fast path")
    }
}
