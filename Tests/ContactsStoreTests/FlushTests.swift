import ContactsTesting
import Foundation
import GRDB
import SyncTesting
import Testing

@testable import ContactsModel
@testable import ContactsStore

/// Which commits wait for the disk: every one a person makes, and none of the sync's own bookkeeping,
/// whatever came before.
@Suite("Contacts: a person's edits are flushed to the disk, the sync's bookkeeping is not")
struct FlushTests {
    /// SQLite's `synchronous` inside a write: 2 (FULL) waits for the disk at commit, 1 (NORMAL) does not.
    private func synchronous(_ store: ContactStore, durable: Bool) throws -> Int {
        try store.write(durable: durable) { transaction in
            try Int.fetchOne(transaction.db, sql: "PRAGMA synchronous") ?? -1
        }
    }

    @Test("edits and settings at FULL; bookkeeping at NORMAL, and FULL again after it, even after a failure")
    func levels() async throws {
        try await withTemporaryDirectory { directory in
            let store = try ContactStore(path: directory + "/device.sqlite")
            #expect(try synchronous(store, durable: true) == 2)
            #expect(try synchronous(store, durable: false) == 1)
            #expect(try synchronous(store, durable: true) == 2, "a durable write after bookkeeping")
            struct Refused: Error {}
            #expect(throws: Refused.self) { try store.write(durable: false) { _ in throw Refused() } }
            #expect(try synchronous(store, durable: true) == 2, "a durable write after failed bookkeeping")
        }
    }
}
