import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import GRDB
import SyncCore
import Testing

/// A last known server record keeps its contact beside it only when the contact's row differs; the
/// store gives it its own copy before the row changes or goes, so the merge's base is never lost.
@Suite("Last known server records and the contact rows they share")
struct ServerRecordStorageTests {
    /// Whether the server record of `id` shares the contact's row, read from the file.
    private func shares(_ id: UUID, in device: ContactsDevice) throws -> Bool? {
        let queue = try DatabaseQueue(path: device.store.path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Bool.fetchOne(
                db, sql: "SELECT sharesContact FROM serverRecord WHERE id = ?", arguments: [id])
        }
    }

    /// The server record of `id` as the file keeps it.
    private func stored(_ id: UUID, in device: ContactsDevice) throws -> Data? {
        let queue = try DatabaseQueue(path: device.store.path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Data.fetchOne(db, sql: "SELECT json FROM serverRecord WHERE id = ?", arguments: [id])
        }
    }

    /// The contact a server record holds.
    private func contact(in record: RecordValue?) throws -> Contact {
        try Contact(record: try #require(record))
    }

    @Test("a record just sent, or just fetched, shares the contact's row; an edit or a delete gives it its own copy")
    func sharedUntilTheRowChanges() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            let id = try a.contacts.add(Contact(name: "Ada Lovelace", organization: "Analytical Engines")).id
            try await a.sync()
            try await b.sync()
            for device in [a, b] {
                #expect(try shares(id, in: device) == true)
                // Kept compact (``StoredServerRecord``, form 3), not as the JSON earlier versions wrote: the
                // contacts' zone and type left out, the creator the server named as 16 bytes, one date.
                let bytes = try #require(try stored(id, in: device))
                #expect(bytes.first == 3)
                #expect(bytes.count < 56, "\(bytes.count) bytes")
                let record = try device.store.serverRecord(id)
                #expect(try contact(in: record).organization == "Analytical Engines")
            }

            // An edit on A: its server record still says what the server has.
            try a.edit("Ada Lovelace") { $0.organization = "Difference Engines" }
            #expect(try shares(id, in: a) == false)
            #expect(try contact(in: a.store.serverRecord(id)).organization == "Analytical Engines")

            // B edits another field meanwhile; A merges both on the base it kept.
            try b.edit("Ada Lovelace") { $0.notes = "First programmer" }
            try await b.sync()
            try await a.sync()
            try await b.sync()
            for device in [a, b] {
                let merged = try device.contact(named: "Ada Lovelace")
                #expect(merged.organization == "Difference Engines")
                #expect(merged.notes == "First programmer")
                #expect(try shares(id, in: device) == true)
            }

            // A delete keeps the server record whole until the server confirms it.
            try a.contacts.delete(id)
            #expect(try contact(in: a.store.serverRecord(id)).notes == "First programmer")
            try await a.sync()
            #expect(try a.store.serverRecord(id) == nil)
            try await b.sync()
            #expect(b.names.isEmpty)
        }
    }
}
