import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

@Suite("Bad input gets a clear 4xx and changes nothing", .onEveryBackend)
struct BadInputTests {
    /// The database's change token moves with every write, so an equal token means nothing changed.
    private func state(_ client: TestClient) async throws -> (ServerChangeToken, [String: RecordValue]) {
        (try await client.fetchDatabaseChanges().changeToken, try await client.contents())
    }

    private static let recordPath = "/v1/databases/private/records/modify"

    private static func save(
        name: String = "ok", zone: String = "Contacts", type: String = "Contact",
        fields: String = #"{"name":{"type":"string","value":"x"}}"#
    ) -> String {
        let escapedName = String(decoding: try! JSONEncoder().encode(name), as: UTF8.self)
        let escapedZone = String(decoding: try! JSONEncoder().encode(zone), as: UTF8.self)
        return
            #"{"saves":[{"recordID":{"recordName":\#(escapedName),"zoneID":{"zoneName":\#(escapedZone)}},"recordType":"\#(type)","fields":\#(fields)}]}"#
    }

    static let cases: [(String, String, String)] = [
        ("malformed JSON", recordPath, #"{"saves":[{"#),
        ("not an object", recordPath, "[1,2,3]"),
        ("empty body", recordPath, ""),
        ("wrong field type", recordPath, save(fields: #"{"name":{"type":"string","value":42}}"#)),
        ("unknown field type", recordPath, save(fields: #"{"name":{"type":"colour","value":"red"}}"#)),
        (
            "missing recordType", recordPath,
            #"{"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Contacts"}}}]}"#
        ),
        ("savePolicy unknown", recordPath, #"{"savePolicy":"whatever","saves":[]}"#),
        ("empty record name", recordPath, save(name: "")),
        ("record name over 255 bytes", recordPath, save(name: String(repeating: "é", count: 128))),
        ("control character in name", recordPath, save(name: "bad\u{1b}[2Jname")),
        ("path trick in name", recordPath, save(name: "../../etc/passwd")),
        ("reserved name", recordPath, save(name: "_private")),
        ("path trick in zone", recordPath, save(zone: "..")),
        ("bad record type", recordPath, save(type: "Contact Card")),
        ("bad field key", recordPath, save(fields: #"{"na me":{"type":"string","value":"x"}}"#)),
        ("nested list", recordPath, save(fields: #"{"l":{"type":"list","value":[{"type":"list","value":[]}]}}"#)),
        (
            "mixed list", recordPath,
            save(fields: #"{"l":{"type":"list","value":[{"type":"string","value":"a"},{"type":"int64","value":1}]}}"#)
        ),
        ("bad base64", recordPath, save(fields: #"{"b":{"type":"bytes","value":"%%%"}}"#)),
        (
            "same record twice", recordPath,
            #"{"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Contacts"}},"recordType":"C"},{"recordID":{"recordName":"a","zoneID":{"zoneName":"Contacts"}},"recordType":"C"}]}"#
        ),
        ("unknown database", "/v1/databases/public/records/modify", save()),
        (
            "zone save with bad name", "/v1/databases/private/zones/modify",
            #"{"saves":[{"zoneID":{"zoneName":"a/b"}}]}"#
        ),
        ("fetch with zero limit", "/v1/databases/private/zones/changes", #"{"resultsLimit":0}"#),
        (
            "fetch with a forged token", "/v1/databases/private/records/changes",
            #"{"zoneID":{"zoneName":"Contacts"},"since":"eyJ2IjoxfQ=="}"#
        ),
        ("lookup without IDs", "/v1/databases/private/records/lookup", "{}"),
    ]

    @Test("each kind of bad input", arguments: cases)
    func badInput(label: String, path: String, body: String) async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            try await ada.save([contact("Grace")])
            let before = try await state(ada)

            let answer = try await ada.send(.post, path, body: Data(body.utf8))
            #expect((400..<500).contains(answer.status), "\(label): HTTP \(answer.status)")
            let error = try #require(answer.error, "\(label): no error body")
            #expect(
                error.code == .invalidArguments || error.code == .limitExceeded || error.code == .changeTokenExpired,
                "\(label): \(error)")
            #expect(error.message.count > 10, "\(label): message too short to act on")
            let after = try await state(ada)
            #expect(after.0 == before.0 && after.1 == before.1, "\(label) changed stored data")
        }
    }

    @Test("an unknown route is a 404 with an error body that points at the API description")
    func unknownRoute() async throws {
        try await withServer { _, anonymous in
            let answer = try await anonymous.send(.get, "/v1/nothing-here")
            #expect(answer.status == 404)
            #expect(answer.error?.message.contains("openapi.yaml") == true)
        }
    }

    @Test("no mangled request makes the server fail: every answer is below 500 and every error has a body")
    func fuzzedBodiesNeverFailTheServer() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            try await ada.save([contact("Grace")])
            let valid = [
                ("/v1/databases/private/records/modify", Self.save(name: "Grace")),
                ("/v1/databases/private/zones/modify", #"{"deletes":[{"zoneName":"Contacts"}]}"#),
                (
                    "/v1/databases/private/records/lookup",
                    #"{"recordIDs":[{"recordName":"Grace","zoneID":{"zoneName":"Contacts"}}]}"#
                ),
                ("/v1/databases/private/records/changes", #"{"zoneID":{"zoneName":"Contacts"},"resultsLimit":5}"#),
                ("/v1/accounts", #"{"username":"eve","password":"long enough"}"#),
                ("/v1/sessions", #"{"username":"ada","password":"correct horse battery"}"#),
            ]
            var random = SeededRandom(seed: 42)
            var statuses: [Int: Int] = [:]
            for _ in 0..<600 {
                let (path, body) = valid[Int(random.next() % UInt64(valid.count))]
                let mangled = Self.mangle(Array(body.utf8), random: &random)
                let answer = try await ada.send(.post, path, body: Data(mangled))
                statuses[answer.status, default: 0] += 1
                #expect(answer.status < 500, "\(path) \(String(decoding: mangled, as: UTF8.self)) → \(answer.status)")
                if answer.status >= 400 { #expect(answer.error != nil, "every error has a body") }
            }
            #expect(statuses.keys.contains { $0 >= 400 }, "the mangling produced no bad input: \(statuses)")
        }
    }

    /// Deletes, duplicates or replaces a few bytes, or cuts the body short.
    static func mangle(_ bytes: [UInt8], random: inout SeededRandom) -> [UInt8] {
        var bytes = bytes
        let replacements = Array(#"{}[]",:0-9aZ\ "#.utf8) + [0, 0xFF, 0xC3]
        for _ in 0..<(1 + Int(random.next() % 3)) where !bytes.isEmpty {
            let index = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 4 {
            case 0: bytes.remove(at: index)
            case 1: bytes.insert(replacements[Int(random.next() % UInt64(replacements.count))], at: index)
            case 2: bytes[index] = replacements[Int(random.next() % UInt64(replacements.count))]
            default: bytes = Array(bytes.prefix(index))
            }
        }
        return bytes
    }
}

/// A deterministic generator, so a failure reproduces.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 17 ^ state
    }
}
