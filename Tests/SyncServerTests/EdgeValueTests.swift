import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// Sends the values attackers and broken clients send — integers past Int64, infinity and NaN
/// however JSON can spell them, dates past any calendar, megabytes of text, lists 1,000 deep,
/// zero and negative limits, nulls, unknown enum cases — into every route's fields, against the
/// real server over loopback. Each must answer a 4xx with CloudKit's code naming the field,
/// store nothing, and leave the server answering.
@Suite("Edge values: a clear 4xx naming the field, nothing stored, the server still up", .onEveryBackend)
struct EdgeValueTests {
    /// One hostile request and what its answer must say.
    struct Case: CustomStringConvertible {
        var label: String
        var method: RequestMethod = .post
        var path: String
        var body: Data?
        var headers: [(String, String)] = []
        /// The codes the answer may carry.
        var codes: Set<SyncError.Code> = [.invalidArguments]
        /// Text the error message must contain: the field's name, as the server writes paths.
        var naming: String

        var description: String { "\(label) → \(path)" }
    }

    static let modifyPath = "/v1/databases/private/records/modify"
    static let zonesPath = "/v1/databases/private/zones/modify"
    static let databaseChangesPath = "/v1/databases/private/zones/changes"
    static let zoneChangesPath = "/v1/databases/private/records/changes"
    static let lookupPath = "/v1/databases/private/records/lookup"

    /// A zone ID of the caller's, a record ID in it.
    static let zoneJSON = #"{"zoneName":"Contacts","ownerName":"__defaultOwner__"}"#
    static let recordIDJSON = #"{"recordName":"Eve","zoneID":\#(zoneJSON)}"#

    /// A modify request saving one record "Eve" with the given fields and extra record members.
    static func save(fields: String, record extra: String = "", request: String = "") -> Data {
        Data(
            #"{"saves":[{"recordID":\#(recordIDJSON),"recordType":"Contact","fields":\#(fields)\#(extra)}]\#(request)}"#
                .utf8)
    }

    static func field(_ type: String, _ value: String) -> Data {
        save(fields: #"{"n":{"type":"\#(type)","value":\#(value)}}"#)
    }

    /// Spellings of numbers no integer field accepts.
    static let badIntegers = [
        "9223372036854775808", "-9223372036854775809", "18446744073709551616", "1e999", "-1e999", "1.5", "1e3",
        #""NaN""#, #""Infinity""#, #""-Infinity""#, #""9223372036854775807""#, "null", "true", "[]", "{}",
    ]
    /// Spellings of infinity and NaN, and other non-numbers, where a double belongs.
    static let badDoubles = [
        "1e999", "-1e999", "1E400", "-1E400", #""NaN""#, #""nan""#, #""Infinity""#, #""-Infinity""#, #""inf""#,
        #""1e999""#, "null", "[]",
    ]
    /// Milliseconds no date holds.
    static let badDates = [
        "9223372036854775807", "-9223372036854775808", "8640000000000001", "-8640000000000001", "1e999", "-1e999",
        "1.5", #""NaN""#, "null",
    ]
    /// Limits that are no limit.
    static let badLimits = [
        "0", "-1", "-0", "-9223372036854775808", "9223372036854775808", "1e999", "-1e999", "1.5", #""10""#, "null",
        "true",
    ]

    static let nested1000Lists =
        String(repeating: #"{"type":"list","value":["#, count: 1000) + String(repeating: "]}", count: 1000)
    static let nested1000Arrays = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
    static let tenMegabytes = String(repeating: "x", count: 10 * 1024 * 1024)

    static var cases: [Case] {
        var cases: [Case] = []
        func add(
            _ label: String, _ path: String, _ body: Data?, naming: String,
            codes: Set<SyncError.Code> = [
                .invalidArguments
            ], headers: [(String, String)] = []
        ) {
            cases.append(Case(label: label, path: path, body: body, headers: headers, codes: codes, naming: naming))
        }
        func json(_ text: String) -> Data { Data(text.utf8) }

        // records/modify: field values.
        for text in badIntegers {
            add("int64 \(text)", modifyPath, field("int64", text), naming: "saves[0].fields.n.value")
        }
        for text in badDoubles {
            add("double \(text)", modifyPath, field("double", text), naming: "saves[0].fields.n.value")
        }
        for text in badDates {
            add("date \(text)", modifyPath, field("date", text), naming: "saves[0].fields.n.value")
            add(
                "modificationDate \(text)", modifyPath, save(fields: "{}", record: #","modificationDate":\#(text)"#),
                naming: "saves[0].modificationDate")
            add(
                "creationDate \(text)", modifyPath, save(fields: "{}", record: #","creationDate":\#(text)"#),
                naming: "saves[0].creationDate")
        }
        add(
            "int64 list element 2^63", modifyPath,
            save(
                fields:
                    #"{"l":{"type":"list","value":[{"type":"int64","value":1},{"type":"int64","value":9223372036854775808}]}}"#
            ),
            naming: "saves[0].fields.l.value[1].value")
        add(
            "date list element Int64.max", modifyPath,
            save(fields: #"{"l":{"type":"list","value":[{"type":"date","value":9223372036854775807}]}}"#),
            naming: "saves[0].fields.l.value[0].value")
        add(
            "1,000-deep list", modifyPath, save(fields: #"{"deep":\#(nested1000Lists)}"#),
            naming: "saves[0].fields.deep.value[0]")
        add("1,000-deep arrays", modifyPath, json(#"{"deletes":\#(nested1000Arrays)}"#), naming: "deletes[0][0]")
        add(
            "10 MB string", modifyPath, save(fields: #"{"n":{"type":"string","value":"\#(tenMegabytes)"}}"#),
            naming: "request body", codes: [.limitExceeded])
        add(
            "10 MB record name", modifyPath,
            json(#"{"deletes":[{"recordName":"\#(tenMegabytes)","zoneID":\#(zoneJSON)}]}"#), naming: "request body",
            codes: [.limitExceeded])
        add(
            "a key twice", modifyPath,
            save(fields: #"{"n":{"type":"int64","value":1},"n":{"type":"int64","value":2}}"#),
            naming: "saves[0].fields.n")

        // records/modify: enums, nulls and the rest of the request.
        for policy in [#""whatever""#, #""""#, #""IFSERVERRECORDUNCHANGED""#, "null", "1"] {
            add(
                "savePolicy \(policy)", modifyPath, save(fields: "{}", request: #","savePolicy":\#(policy)"#),
                naming: "savePolicy")
        }
        for type in ["colour", "LIST", "", "int32"] {
            add("field type '\(type)'", modifyPath, field(type, "1"), naming: "saves[0].fields.n.type")
        }
        add(
            "reference action explode", modifyPath,
            field("reference", #"{"recordID":\#(recordIDJSON),"action":"explode"}"#),
            naming: "saves[0].fields.n.value.action")
        for atomic in [#""yes""#, "1", "null"] {
            add("atomic \(atomic)", modifyPath, save(fields: "{}", request: #","atomic":\#(atomic)"#), naming: "atomic")
        }
        for member in ["saves", "deletes", "clientRequestID"] {
            add("\(member) null", modifyPath, json(#"{"\#(member)":null}"#), naming: member)
        }
        add(
            "clientRequestID empty", modifyPath, save(fields: "{}", request: #","clientRequestID":"""#),
            naming: "clientRequestID")
        for member in ["recordChangeTag", "changedKeys", "creatorUserRecordName", "fields"] {
            let body = #"{"saves":[{"recordID":\#(recordIDJSON),"recordType":"Contact","\#(member)":null}]}"#
            add("record \(member) null", modifyPath, json(body), naming: "saves[0].\(member)")
        }
        add(
            "ownerName null in a record ID", modifyPath,
            json(#"{"deletes":[{"recordName":"Grace","zoneID":{"zoneName":"Contacts","ownerName":null}}]}"#),
            naming: "deletes[0].zoneID.ownerName")
        add(
            "record name a number", modifyPath, json(#"{"deletes":[{"recordName":5,"zoneID":\#(zoneJSON)}]}"#),
            naming: "deletes[0].recordName")
        add(
            "changedKeys twice", modifyPath, save(fields: "{}", record: #","changedKeys":["n","n"]"#),
            naming: "saves[0].changedKeys")
        add(
            "401 items", modifyPath,
            json(#"{"deletes":[\#(Array(repeating: recordIDJSON, count: 401).joined(separator: ","))]}"#),
            naming: "401 items", codes: [.limitExceeded])
        add("empty body", modifyPath, Data(), naming: "empty")
        add("empty X-Device-ID", modifyPath, field("int64", "1"), naming: "X-Device-ID", headers: [("X-Device-ID", "")])
        add(
            "X-Device-ID of 300 bytes", modifyPath, field("int64", "1"), naming: "X-Device-ID",
            headers: [("X-Device-ID", String(repeating: "d", count: 300))])
        add("unknown database", "/v1/databases/public/records/modify", field("int64", "1"), naming: "public")

        // zones/modify.
        add(
            "ownerName null deleting a zone", zonesPath,
            json(#"{"deletes":[{"zoneName":"Contacts","ownerName":null}]}"#), naming: "deletes[0].ownerName")
        add(
            "ownerName a number", zonesPath, json(#"{"deletes":[{"zoneName":"Contacts","ownerName":0}]}"#),
            naming: "deletes[0].ownerName")
        for member in ["saves", "deletes"] {
            add("\(member) null", zonesPath, json(#"{"\#(member)":null}"#), naming: member)
        }
        add("zone 1,000-deep", zonesPath, json(#"{"saves":\#(nested1000Arrays)}"#), naming: "saves[0][0]")
        add(
            "zone name of 10 MB", zonesPath, json(#"{"saves":[{"zoneID":{"zoneName":"\#(tenMegabytes)"}}]}"#),
            naming: "request body", codes: [.limitExceeded])
        add(
            "zone name of 300 bytes", zonesPath,
            json(#"{"saves":[{"zoneID":{"zoneName":"\#(String(repeating: "z", count: 300))"}}]}"#), naming: "saves[0]")
        add("empty body", zonesPath, Data(), naming: "empty")
        add(
            "empty X-Device-ID", zonesPath, json(#"{"saves":[{"zoneID":{"zoneName":"Other"}}]}"#),
            naming: "X-Device-ID", headers: [("X-Device-ID", "")])

        // zones/changes and records/changes: limits and tokens.
        for text in badLimits {
            add(
                "resultsLimit \(text)", databaseChangesPath, json(#"{"resultsLimit":\#(text)}"#), naming: "resultsLimit"
            )
            add(
                "resultsLimit \(text)", zoneChangesPath, json(#"{"zoneID":\#(zoneJSON),"resultsLimit":\#(text)}"#),
                naming: "resultsLimit")
        }
        for since in ["null", "5", #""%%%""#, "[]"] {
            add("since \(since)", databaseChangesPath, json(#"{"since":\#(since)}"#), naming: "since")
            add("since \(since)", zoneChangesPath, json(#"{"zoneID":\#(zoneJSON),"since":\#(since)}"#), naming: "since")
        }
        add("empty body", databaseChangesPath, Data(), naming: "empty")
        add("since 1,000-deep", databaseChangesPath, json(#"{"since":\#(nested1000Arrays)}"#), naming: "since[0][0]")
        add("empty body", zoneChangesPath, Data(), naming: "empty")
        add("zoneID missing", zoneChangesPath, json("{}"), naming: "zoneID")
        add("zoneID null", zoneChangesPath, json(#"{"zoneID":null}"#), naming: "zoneID")
        add(
            "ownerName null", zoneChangesPath, json(#"{"zoneID":{"zoneName":"Contacts","ownerName":null}}"#),
            naming: "zoneID.ownerName")

        // records/lookup.
        for ids in ["null", #""Eve""#, "[5]", "[null]"] {
            add("recordIDs \(ids)", lookupPath, json(#"{"recordIDs":\#(ids)}"#), naming: "recordIDs")
        }
        add("recordIDs missing", lookupPath, json("{}"), naming: "recordIDs")
        add(
            "401 IDs", lookupPath,
            json(#"{"recordIDs":[\#(Array(repeating: recordIDJSON, count: 401).joined(separator: ","))]}"#),
            naming: "401 items", codes: [.limitExceeded])
        add("empty body", lookupPath, Data(), naming: "empty")

        // zones/list takes no body, but one it is sent must be an object.
        add("a list body", "/v1/databases/private/zones/list", json("[1,2]"), naming: "body")
        add("1e999 body", "/v1/databases/private/zones/list", json("1e999"), naming: "body")
        add(
            "1,000-deep body", "/v1/databases/private/zones/list",
            json(String(repeating: #"{"a":"#, count: 1000) + "1" + String(repeating: "}", count: 1000)),
            naming: "a.a.a")

        // Accounts and sessions, as anyone can send them.
        for path in ["/v1/accounts", "/v1/sessions"] {
            add("username null", path, json(#"{"username":null,"password":"long enough"}"#), naming: "username")
            add("username a number", path, json(#"{"username":1e999,"password":"long enough"}"#), naming: "username")
            add("password missing", path, json(#"{"username":"mallory"}"#), naming: "password")
            add("password infinite", path, json(#"{"username":"mallory","password":-1e999}"#), naming: "password")
            add(
                "password of 10 MB", path, json(#"{"username":"mallory","password":"\#(tenMegabytes)"}"#),
                naming: "request body", codes: [.limitExceeded])
            add(
                "username twice", path, json(#"{"username":"mallory","username":"eve","password":"long enough"}"#),
                naming: "username")
            add("empty body", path, Data(), naming: "empty")
        }
        add(
            "username of 1,000 characters", "/v1/accounts",
            json(#"{"username":"\#(String(repeating: "m", count: 1000))","password":"long enough"}"#),
            naming: "username")
        return cases
    }

    @Test("every hostile value gets a 4xx naming its field, changes nothing, and the server keeps answering")
    func hostileValues() async throws {
        try await withServer { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            try await ada.save([contact("Grace")])
            let before = try await state(ada)
            let cases = Self.cases
            #expect(cases.count >= 150)
            for hostile in cases {
                let answer = try await ada.send(
                    hostile.method, hostile.path, body: hostile.body, headers: hostile.headers)
                #expect((400..<500).contains(answer.status), "\(hostile): HTTP \(answer.status)")
                if let error = answer.error {
                    #expect(hostile.codes.contains(error.code), "\(hostile): \(error)")
                    #expect(
                        error.message.contains(hostile.naming),
                        "\(hostile): the message does not name '\(hostile.naming)': \(error.message)")
                } else {
                    Issue.record(
                        "\(hostile): no error body: \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
                }
                let health = try await anonymous.send(.get, "/v1/health")
                #expect(health.status == 200, "\(hostile): the server stopped answering")
                let after = try await state(ada)
                #expect(after.0 == before.0 && after.1 == before.1, "\(hostile) changed stored data")
                #expect(try await server.store.account(username: "mallory") == nil, "\(hostile) created an account")
            }
        }
    }

    @Test("the edge values a field can hold are stored and answered exactly")
    func validEdgesRoundTrip() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let range = Date.wireMillisecondsRange
            let fields =
                #"{"min":{"type":"int64","value":-9223372036854775808},"max":{"type":"int64","value":9223372036854775807},"#
                + #""odd":{"type":"int64","value":9007199254740993},"negativeZero":{"type":"double","value":-0},"#
                + #""huge":{"type":"double","value":1.7976931348623157e308},"tiny":{"type":"double","value":5e-324},"#
                + #""first":{"type":"date","value":\#(range.lowerBound)},"last":{"type":"date","value":\#(range.upperBound)}}"#
            let answer = try await ada.send(.post, Self.modifyPath, body: Self.save(fields: fields))
            let saved = try answer.decoded(as: ModifyRecordsResponse.self)
            #expect(saved.failedRecordSaves.isEmpty, "\(saved.failedRecordSaves)")

            let stored = try #require(try await ada.contents()["Eve"])
            #expect(stored["min"] == .int64(.min))
            #expect(stored["max"] == .int64(.max))
            #expect(stored["odd"] == .int64(9_007_199_254_740_993))
            let negativeZero = try #require(stored["negativeZero"]?.doubleValue)
            #expect(negativeZero == 0 && negativeZero.sign == .minus)
            #expect(stored["huge"] == .double(.greatestFiniteMagnitude))
            #expect(stored["tiny"] == .double(.leastNonzeroMagnitude))
            #expect(stored["first"]?.dateValue?.millisecondsSince1970 == range.lowerBound)
            #expect(stored["last"]?.dateValue?.millisecondsSince1970 == range.upperBound)

            // The largest limit a client can send is capped, not refused.
            for path in [Self.databaseChangesPath, Self.zoneChangesPath] {
                let body = #"{"zoneID":\#(Self.zoneJSON),"resultsLimit":9223372036854775807}"#
                #expect(try await ada.send(.post, path, body: Data(body.utf8)).status == 200, "\(path)")
            }
        }
    }

    @Test("a record over the per-record limit fails alone with limitExceeded, naming the record")
    func recordOverItsLimit() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let text = String(repeating: "x", count: 1_500_000)
            let answer = try await ada.send(
                .post, Self.modifyPath, body: Self.save(fields: #"{"n":{"type":"string","value":"\#(text)"}}"#))
            let response = try answer.decoded(as: ModifyRecordsResponse.self)
            #expect(response.savedRecords.isEmpty)
            let failure = try #require(response.failedRecordSaves.first)
            #expect(failure.error.code == .limitExceeded)
            #expect(failure.error.message.contains("'Eve'"))
            #expect(try await ada.contents().isEmpty)
        }
    }

    /// The database's change token moves with every write, so an equal token means nothing changed.
    private func state(_ client: TestClient) async throws -> (ServerChangeToken, [String: RecordValue]) {
        (try await client.fetchDatabaseChanges().changeToken, try await client.contents())
    }
}
