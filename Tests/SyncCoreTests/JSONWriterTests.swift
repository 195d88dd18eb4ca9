import Foundation
import SyncCore
import Testing

@Suite("JSONWriter writes what Codable reads")
struct JSONWriterTests {
    @Test("a record with every field type and hostile strings decodes back equal")
    func recordRoundTrip() throws {
        let zone = RecordZone.ID(zoneName: "Zone \"quoted\" \\ back", ownerName: "_owner")
        var record = RecordValue(
            recordType: "Contact", recordID: RecordValue.ID(recordName: "名前\u{1}\n\t\r🙂", zoneID: zone))
        record["string"] = .string("Zoë \"Q\" \\ / \u{0}\u{1f}\u{7f} 张伟 👩🏽‍💻")
        record["int"] = .int64(-9_223_372_036_854_775_808)
        record["double"] = .double(0.1)
        record["tiny"] = .double(1e-300)
        record["date"] = .date(Date(millisecondsSince1970: 1_700_000_000_123))
        record["bytes"] = .bytes(Data((0...255).map(UInt8.init)))
        record["reference"] = .reference(RecordValue.Reference(recordID: record.recordID, action: .deleteSelf))
        record["list"] = .list([.int64(1), .int64(2)])
        record["empty"] = .list([])
        record.recordChangeTag = "tag"
        record.creationDate = Date(millisecondsSince1970: 1)
        record.modificationDate = Date(millisecondsSince1970: 2)
        record.creatorUserRecordID = RecordValue.ID(userRecordName: "_creator")
        record.lastModifiedUserRecordID = RecordValue.ID(userRecordName: "_modifier")

        var writer = JSONWriter()
        writer.record(record)
        let decoded = try JSONDecoder().decode(RecordValue.self, from: Data(writer.bytes))
        #expect(decoded == record)
        #expect(decoded.changedKeys == record.changedKeys)
        #expect(decoded.fields == record.fields)
    }

    @Test("a modify request decodes back equal")
    func modifyRequestRoundTrip() throws {
        var record = RecordValue(
            recordType: "Contact", recordID: RecordValue.ID(recordName: "a", zoneID: RecordZone.ID(zoneName: "Z")))
        record["name"] = "Ada"
        for request in [
            ModifyRecordsRequest(
                saves: [record], deletes: [record.recordID], savePolicy: .changedKeys, atomic: true,
                clientRequestID: "id \"1\""),
            ModifyRecordsRequest(saves: [record], desiredKeys: []),
            ModifyRecordsRequest(),
        ] {
            var writer = JSONWriter()
            writer.modifyRecordsRequest(request)
            #expect(try JSONDecoder().decode(ModifyRecordsRequest.self, from: Data(writer.bytes)) == request)
        }
    }

    @Test("equal fields give equal bytes, whatever order they were set in")
    func canonicalFields() {
        var first = JSONWriter()
        first.fields(["b": "2", "a": "1", "c": .list([.string("x")])])
        var second = JSONWriter()
        second.fields(["c": .list([.string("x")]), "a": "1", "b": "2"])
        #expect(first.bytes == second.bytes)
    }

    @Test("bytes are written as base64 exactly as Foundation writes it, at every length")
    func base64MatchesFoundation() {
        for count in Array(0...70) + [255, 256, 257, 1000, 4097] {
            let data = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ count &* 7) })
            var writer = JSONWriter()
            writer.base64String(data)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == "\"" + data.base64EncodedString() + "\"")
        }
        var writer = JSONWriter()
        writer.base64String(Data((0...255).map(UInt8.init)))
        #expect(
            Data(base64Encoded: String(decoding: writer.bytes.dropFirst().dropLast(), as: UTF8.self))
                == Data((0...255).map(UInt8.init)))
    }
}
