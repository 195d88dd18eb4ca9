import Foundation
import SyncCore
import Testing

@testable import SyncClient

/// The keyring's memory of what it sealed: exact ciphertexts only, bounded, and dropped with a zone.
@Suite("Keyring: values sealed here come back without opening")
struct RecentlySealedTests {
    static func recordID(_ index: Int, zone: String = "Contacts") -> RecordValue.ID {
        RecordValue.ID(recordName: "r\(index)", zoneID: RecordZone.ID(zoneName: zone))
    }

    static func field(_ index: Int) -> [String: RecentlySealed.Field] {
        ["name": .init(sealed: Data("sealed \(index)".utf8), plain: .string("plain \(index)"))]
    }

    @Test("the oldest records are forgotten first once the limit is passed; a re-sealed one is replaced")
    func bounded() {
        var memory = RecentlySealed()
        let count = RecentlySealed.recordLimit + 500
        for index in 0..<count { memory.remember(Self.field(index), for: Self.recordID(index)) }
        memory.remember(Self.field(-1), for: Self.recordID(count - 1))
        #expect(memory.fields.count == RecentlySealed.recordLimit)
        #expect(memory.fields[Self.recordID(499)] == nil)
        #expect(memory.fields[Self.recordID(500)]?["name"]?.plain == .string("plain 500"))
        #expect(memory.fields[Self.recordID(count - 1)]?["name"]?.plain == .string("plain -1"))
    }

    @Test("forgetting a zone drops its records and keeps the others")
    func forgetZone() {
        var memory = RecentlySealed()
        memory.remember(Self.field(1), for: Self.recordID(1))
        memory.remember(Self.field(2), for: Self.recordID(2, zone: "Other"))
        memory.forget(zoneIDs: [RecordZone.ID(zoneName: "Contacts")])
        #expect(memory.fields.keys.map(\.recordName) == ["r2"])
        for index in 3..<(RecentlySealed.recordLimit + 3) {
            memory.remember(Self.field(index), for: Self.recordID(index))
        }
        #expect(memory.fields.count == RecentlySealed.recordLimit)
        #expect(memory.fields[Self.recordID(2, zone: "Other")] == nil, "the oldest left first")
    }
}
