import Foundation
import Testing

@testable import SyncCore

/// Every value read from the wire is checked where it is decoded, by the server (request bodies)
/// and by the engine (a server's answers, which a hostile or broken server controls): out of range
/// is a `DecodingError` naming the member, never a trap and never a silently changed value.
@Suite("Values from the wire are checked where they are decoded")
struct WireValueTests {
    /// The member a decoding error names, written as the server's messages write it.
    private static func path(of error: any Error) -> String? {
        let codingPath: [any CodingKey]
        switch error as? DecodingError {
        case .dataCorrupted(let context)?: codingPath = context.codingPath
        case .keyNotFound(let key, let context)?: codingPath = context.codingPath + [key]
        case .typeMismatch(_, let context)?: codingPath = context.codingPath
        case .valueNotFound(_, let context)?: codingPath = context.codingPath
        default: return nil
        }
        let text = codingPath.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
        return text.hasPrefix(".") ? String(text.dropFirst()) : text
    }

    /// Decoding `json` as `type` fails with an error naming `member` (a prefix of its path).
    private func expectRejected<T: Decodable>(
        _ type: T.Type, _ json: String, naming member: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            _ = try JSONReader.decode(type, from: Data(json.utf8))
            Issue.record("accepted \(json.prefix(200))", sourceLocation: sourceLocation)
        } catch {
            let path = Self.path(of: error)
            #expect(
                path?.hasPrefix(member) == true, "\(json.prefix(120)) → \(error) names \(path ?? "nothing")",
                sourceLocation: sourceLocation)
        }
    }

    private static func save(fields: String = "{}", extra: String = "") -> String {
        #"{"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z"}},"recordType":"C","fields":\#(fields)\#(extra)}]}"#
    }

    private static func field(_ type: String, _ value: String) -> String {
        save(fields: #"{"n":{"type":"\#(type)","value":\#(value)}}"#)
    }

    @Test("integers must be whole numbers in range; the edges are kept exactly")
    func integers() throws {
        for text in ["9223372036854775808", "-9223372036854775809", "1e999", "-1e999", "1.5", "1e3", "\"7\"", "null"] {
            expectRejected(ModifyRecordsRequest.self, Self.field("int64", text), naming: "saves[0].fields.n.value")
        }
        for value in [Int64.min, Int64.max, 0, 9_007_199_254_740_993] {
            let request = try JSONReader.decode(
                ModifyRecordsRequest.self, from: Data(Self.field("int64", "\(value)").utf8))
            #expect(request.saves[0]["n"] == .int64(value))
        }
        #expect(
            try JSONReader.decode(ModifyRecordsRequest.self, from: Data(Self.field("int64", "-0").utf8)).saves[0]["n"]
                == .int64(0))
    }

    @Test("doubles must be finite, however JSON spells infinity or NaN")
    func doubles() throws {
        for text in ["1e999", "-1e999", "1E400", "\"NaN\"", "\"Infinity\"", "\"-Infinity\"", "\"inf\"", "true"] {
            expectRejected(ModifyRecordsRequest.self, Self.field("double", text), naming: "saves[0].fields.n.value")
        }
        let negativeZero = try JSONReader.decode(ModifyRecordsRequest.self, from: Data(Self.field("double", "-0").utf8))
        let value = try #require(negativeZero.saves[0]["n"]?.doubleValue)
        #expect(value == 0 && value.sign == .minus)
        let large = try JSONReader.decode(
            ModifyRecordsRequest.self, from: Data(Self.field("double", "1.7976931348623157e308").utf8))
        #expect(large.saves[0]["n"] == .double(.greatestFiniteMagnitude))
    }

    @Test("dates must lie within ±8.64e15 ms of 1970, in fields and in system fields")
    func dates() throws {
        for text in ["9223372036854775807", "-9223372036854775808", "8640000000000001", "-8640000000000001", "1e999"] {
            expectRejected(ModifyRecordsRequest.self, Self.field("date", text), naming: "saves[0].fields.n.value")
            expectRejected(
                ModifyRecordsRequest.self, Self.save(extra: #","modificationDate":\#(text)"#),
                naming: "saves[0].modificationDate")
            expectRejected(
                ModifyRecordsRequest.self, Self.save(extra: #","creationDate":\#(text)"#),
                naming: "saves[0].creationDate")
        }
        for edge in [Date.wireMillisecondsRange.lowerBound, Date.wireMillisecondsRange.upperBound] {
            let request = try JSONReader.decode(
                ModifyRecordsRequest.self, from: Data(Self.field("date", "\(edge)").utf8))
            #expect(request.saves[0]["n"]?.dateValue?.millisecondsSince1970 == edge)
        }
    }

    @Test("converting any date to milliseconds never traps")
    func dateConversionIsTotal() {
        let range = Date.wireMillisecondsRange
        #expect(Date(timeIntervalSince1970: 1e300).millisecondsSince1970 == range.upperBound)
        #expect(Date(timeIntervalSince1970: -1e300).millisecondsSince1970 == range.lowerBound)
        #expect(Date(timeIntervalSince1970: .infinity).millisecondsSince1970 == range.upperBound)
        #expect(Date(timeIntervalSince1970: .nan).millisecondsSince1970 == 0)
        #expect(Date(millisecondsSince1970: Int64.max).millisecondsSince1970 == range.upperBound)
        var record = RecordValue(
            recordType: "C", recordID: RecordValue.ID(recordName: "a", zoneID: RecordZone.ID(zoneName: "Z")))
        record["far"] = .date(Date(timeIntervalSince1970: 1e300))
        record.modificationDate = Date(timeIntervalSince1970: -1e300)
        var writer = JSONWriter()
        writer.record(record)
        #expect(String(decoding: writer.bytes, as: UTF8.self).contains("\(range.upperBound)"))
    }

    @Test("null is refused wherever the API gives it no meaning")
    func nulls() {
        let zone = #"{"zoneName":"Z","ownerName":null}"#
        expectRejected(ModifyZonesRequest.self, #"{"deletes":[\#(zone)]}"#, naming: "deletes[0].ownerName")
        expectRejected(ModifyZonesRequest.self, #"{"saves":null}"#, naming: "saves")
        expectRejected(FetchDatabaseChangesRequest.self, #"{"since":null}"#, naming: "since")
        expectRejected(FetchDatabaseChangesRequest.self, #"{"resultsLimit":null}"#, naming: "resultsLimit")
        expectRejected(FetchZoneChangesRequest.self, #"{"zoneID":{"zoneName":"Z"},"since":null}"#, naming: "since")
        expectRejected(FetchZoneChangesRequest.self, #"{"zoneID":null}"#, naming: "zoneID")
        for member in ["saves", "deletes", "savePolicy", "atomic", "clientRequestID", "desiredKeys"] {
            expectRejected(ModifyRecordsRequest.self, #"{"\#(member)":null}"#, naming: member)
        }
        expectRejected(
            ModifyRecordsRequest.self,
            #"{"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z"}},"recordType":"C","fields":null}]}"#,
            naming: "saves[0].fields")
        for member in ["changedKeys", "recordChangeTag", "creationDate", "creatorUserRecordName"] {
            expectRejected(
                ModifyRecordsRequest.self, Self.save(extra: #","\#(member)":null"#), naming: "saves[0].\(member)")
        }
        expectRejected(LookupRecordsRequest.self, #"{"recordIDs":null}"#, naming: "recordIDs")
        expectRejected(AccountCredentials.self, #"{"username":null,"password":"x"}"#, naming: "username")
    }

    @Test("nesting deeper than the limit is refused at the member where it goes too deep")
    func depth() {
        let deep = String(repeating: #"{"type":"list","value":["#, count: 1000) + String(repeating: "]}", count: 1000)
        expectRejected(
            ModifyRecordsRequest.self, Self.save(fields: #"{"deep":\#(deep)}"#), naming: "saves[0].fields.deep.value[0]"
        )
        let arrays = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
        expectRejected(ModifyZonesRequest.self, #"{"saves":\#(arrays)}"#, naming: "saves[0][0][0]")
    }

    @Test("a key twice in one object is refused, however large the object")
    func duplicateKeys() {
        expectRejected(ModifyRecordsRequest.self, #"{"atomic":true,"saves":[],"atomic":false}"#, naming: "atomic")
        let many = (0..<25_000).map { #""f\#($0)":{"type":"int64","value":1}"# }.joined(separator: ",")
        expectRejected(
            ModifyRecordsRequest.self, Self.save(fields: "{\(many),\"f12345\":{\"type\":\"int64\",\"value\":2}}"),
            naming: "saves[0].fields.f12345")
        expectRejected(
            ModifyRecordsRequest.self, Self.save(extra: #","changedKeys":["n","n"]"#), naming: "saves[0].changedKeys")
    }

    @Test("unknown enum cases are refused by name")
    func unknownCases() {
        expectRejected(ModifyRecordsRequest.self, #"{"savePolicy":"whatever"}"#, naming: "savePolicy")
        expectRejected(ModifyRecordsRequest.self, Self.field("colour", "1"), naming: "saves[0].fields.n.type")
        let reference = #"{"recordID":{"recordName":"b","zoneID":{"zoneName":"Z"}},"action":"explode"}"#
        expectRejected(
            ModifyRecordsRequest.self, Self.field("reference", reference), naming: "saves[0].fields.n.value.action")
    }

    @Test("a hostile server's answer fails to decode instead of trapping the engine")
    func hostileAnswers() throws {
        let record =
            #"{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z","ownerName":"_o"}},"recordType":"C","fields":{},"modificationDate":9223372036854775807}"#
        expectRejected(
            FetchZoneChangesResponse.self,
            #"{"modifications":[\#(record)],"deletions":[],"changeToken":"AAE=","moreComing":false}"#,
            naming: "modifications[0].modificationDate")
        for retryAfter in ["1e308", "-1", "1e999", "604801"] {
            let failure =
                #"{"recordID":{"recordName":"a","zoneID":{"zoneName":"Z"}},"error":{"code":"zoneBusy","message":"m","retryAfter":\#(retryAfter)}}"#
            expectRejected(
                ModifyRecordsResponse.self,
                #"{"savedRecords":[],"failedRecordSaves":[\#(failure)],"deletedRecordIDs":[],"failedRecordDeletes":[]}"#,
                naming: "failedRecordSaves[0].error.retryAfter")
            // The engine reads whole-request errors with JSONDecoder: the same rule holds there.
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(
                    SyncError.self, from: Data(#"{"code":"zoneBusy","message":"m","retryAfter":\#(retryAfter)}"#.utf8))
            }
        }
        for limit in ["0", "-5", "1e999"] {
            expectRejected(
                ServerLimits.self,
                #"{"maximumItemsPerRequest":\#(limit),"maximumRequestBytes":1,"maximumRecordBytes":1,"defaultFetchResultsLimit":1,"maximumFetchResultsLimit":1}"#,
                naming: "maximumItemsPerRequest")
        }
        let limits =
            #"{"maximumItemsPerRequest":1,"maximumRequestBytes":1,"maximumRecordBytes":1,"defaultFetchResultsLimit":1,"maximumFetchResultsLimit":1"#
        expectRejected(ServerLimits.self, limits + #","maximumAssetBytes":0}"#, naming: "maximumAssetBytes")
        // A server from before assets does not say its asset limit: read as the default.
        #expect(
            try JSONReader.decode(ServerLimits.self, from: Data((limits + "}").utf8)).maximumAssetBytes
                == ServerLimits.defaultMaximumAssetBytes)
    }
}
