import ContactsModel
import ContactsTesting
import Foundation
import GRDB
import SyncCore
import SyncKit
import SyncTesting
import Testing

@testable import ContactsStore

/// A fetched contact the store knows nothing of is stored without the merge's lookups
/// (``ContactStore/unknownContacts(_:_:)``): only a contact with no row, no last known server record and
/// nothing queued may be taken for one.
@Suite("Fetched contacts new to the store")
struct UnknownContactsTests {
    @Test("a contact with a row, a server record or a queued change is known; only the others are unknown")
    func knownByAnyOfThree() async throws {
        try await withTemporaryDirectory { directory in
            let store = try ContactStore(path: directory + "/device.sqlite")
            let (row, served, queued, deleted, fresh) = (
                Contact(name: "Row Only"), Contact(name: "Served Only"), Contact(name: "Queued Only"),
                Contact(name: "Delete Queued"), Contact(name: "Fresh")
            )
            try store.write { transaction in
                try ContactStore.put(row, transaction.db)
                try ContactStore.putServerRecord(served.record(base: nil), for: served.id, transaction.db)
                try transaction.enqueue(.record(.saveRecord(queued.recordID)))
                try transaction.enqueue(.record(.deleteRecord(deleted.recordID)))
            }
            // Beside them, more names than one statement takes, and a contact's name in lower case.
            let others = (0..<1_200).map { _ in Contact(name: "Other").recordID }
            let lowercased = RecordValue.ID(
                recordName: fresh.id.canonicalString.lowercased(), zoneID: fresh.recordID.zoneID)
            // And a name twice, as a hostile server may send it.
            let asked = [row, served, queued, deleted, fresh, fresh].map(\.recordID) + others + [lowercased]
            let unknown = try await store.queue.read { db in try ContactStore.unknownContacts(asked, db) }
            let named = [row, served, queued, deleted, fresh].filter { unknown.contains($0.id.canonicalString) }
            #expect(named.map(\.name) == ["Fresh"])
            #expect(Set(others.map(\.recordName)).isSubset(of: unknown), "past the first statement's names too")
            #expect(
                unknown.count == 1 + others.count,
                "a name other than a UUID as the store writes one is left to the merge")
        }
    }
}
