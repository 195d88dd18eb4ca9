import Foundation
import SyncCore
import Testing

@Suite("Field values and records on the wire")
struct FieldValueTests {
    private func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
    }

    @Test(
        "every field type survives a round trip",
        arguments: [
            FieldValue.string("Zoë 张伟 👩🏽‍💻"), .int64(Int64.min), .double(-0.5),
            .date(Date(millisecondsSince1970: 1_700_000_000_123)),
            .bytes(Data([0, 1, 2, 255])),
            .reference(
                RecordValue.Reference(
                    recordID: RecordValue.ID(recordName: "r", zoneID: RecordZone.ID(zoneName: "Z")), action: .deleteSelf
                )),
            .list([.string("a"), .string("b")]), .list([]),
        ])
    func roundTrips(value: FieldValue) throws {
        #expect(try roundTrip(value) == value)
    }

    @Test("dates travel as milliseconds since 1970")
    func datesAreMilliseconds() throws {
        let date = Date(millisecondsSince1970: 1_700_000_000_123)
        let json = String(decoding: try JSONEncoder().encode(FieldValue.date(date)), as: UTF8.self)
        #expect(json.contains("1700000000123"))
        #expect(date.addingTimeInterval(0.0004).roundedToMilliseconds == date)
    }

    @Test("an unknown type or bad base64 is a decoding error that says what is wrong")
    func badValues() {
        for json in [
            #"{"type":"colour","value":"red"}"#, #"{"type":"bytes","value":"***"}"#, #"{"type":"int64","value":"1"}"#,
        ] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(FieldValue.self, from: Data(json.utf8)) }
        }
    }

    @Test("setting a field marks it changed; equality ignores that bookkeeping")
    func changedKeys() throws {
        var record = RecordValue(
            recordType: "Contact",
            recordID: RecordValue.ID(recordName: "a", zoneID: RecordZone.ID(zoneName: "Contacts")))
        record["name"] = "Ada"
        record["email"] = nil
        #expect(record.changedKeys == ["name", "email"])
        var copy = try roundTrip(record)
        #expect(copy.changedKeys == ["name", "email"])
        copy.clearChangedKeys()
        #expect(copy == record)
        #expect(copy.changedKeys.isEmpty)
    }

    @Test("a zone ID without an owner means the signed-in user")
    func defaultOwner() throws {
        let id = try JSONDecoder().decode(RecordZone.ID.self, from: Data(#"{"zoneName":"Contacts"}"#.utf8))
        #expect(id.ownerName == RecordZone.ID.defaultOwnerName)
    }

    @Test("system fields rebuild a record that saves against the same change tag")
    func systemFields() {
        var record = RecordValue(
            recordType: "Contact",
            recordID: RecordValue.ID(recordName: "a", zoneID: RecordZone.ID(zoneName: "Contacts")))
        record.recordChangeTag = "k3"
        record.creationDate = Date(millisecondsSince1970: 5)
        let rebuilt = RecordValue(systemFields: record.systemFields)
        #expect(rebuilt.recordChangeTag == "k3")
        #expect(rebuilt.creationDate == record.creationDate)
        #expect(rebuilt.recordID == record.recordID)
    }
}

@Suite("Name rules")
struct NameRulesTests {
    @Test("valid names pass", arguments: ["Contacts", "a", "张伟", "with space", String(repeating: "x", count: 255)])
    func valid(name: String) {
        #expect(NameRules.problem(withName: name, kind: "zone name") == nil)
    }

    @Test(
        "invalid names are refused with a reason",
        arguments: [
            "", String(repeating: "x", count: 256), "tab\there", "nul\u{0}", "../etc", "a/b", "a\\b", ".", "..",
            "_reserved",
            String(repeating: "é", count: 128),
        ])
    func invalid(name: String) {
        let problem = NameRules.problem(withName: name, kind: "zone name")
        #expect(problem != nil)
        #expect(problem?.contains("zone name") == true)
    }

    @Test("identifiers are ASCII letters, digits and underscores starting with a letter")
    func identifiers() {
        #expect(NameRules.problem(withIdentifier: "Contact_2", kind: "record type") == nil)
        for bad in ["", "2x", "a-b", "é", "_x", "a b"] {
            #expect(NameRules.problem(withIdentifier: bad, kind: "record type") != nil, "\(bad)")
        }
    }
}
