import ContactsModel
import ContactsTesting
import Foundation
import GRDB
import SyncTesting
import Testing

@testable import ContactsStore

/// A new device file has incremental auto-vacuum; a sync that sent gives the pages its emptied outbox left
/// free back to the file system.
@Suite("Device files: page size and free pages")
struct FreePagesTests {
    @Test("an upload that empties a large outbox leaves the file without its pages; the contacts stay whole")
    func uploadReleasesOutboxPages() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            #expect(try pragma("page_size", a) == ContactStore.pageSize)
            #expect(try pragma("auto_vacuum", a) == 2)
            let contacts = (0..<3000).map { index in
                Contact(
                    name: "Person \(index)", emails: [LabeledValue(label: "home", value: "p\(index)@example.org")],
                    notes: String(repeating: "n", count: index % 200))
            }
            _ = try a.interchange.importContacts(contacts)
            try await a.sync()
            // The outbox held 3,000 entries; without the release, they are free pages inside the file.
            let (pages, free) = (try pragma("page_count", a), try pragma("freelist_count", a))
            #expect(free * ContactStore.keptFreeShare <= pages, "\(free) of \(pages) pages free")
            #expect(try a.store.pendingCount() == 0)
            #expect(try a.store.releaseFreePages() == 0, "nothing left to release")
            try await b.sync()
            #expect(try b.store.count() == 3000)
            #expect(try a.store.summaries().map(\.name) == b.store.summaries().map(\.name))
        }
    }

    @Test("a file without auto-vacuum keeps its page size and its free pages, and works as before")
    func earlierFileKeepsItsPages() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/old.sqlite"
            // A file SQLite made before the store (as 0.3 made them: no auto-vacuum), pages freed by a delete.
            let queue = try DatabaseQueue(path: path)
            try await queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA page_size = 1024") }
            try await queue.write { db in
                try db.execute(sql: "CREATE TABLE filler (x BLOB)")
                for _ in 0..<200 { try db.execute(sql: "INSERT INTO filler VALUES (zeroblob(1000))") }
                try db.execute(sql: "DELETE FROM filler")
            }
            try queue.close()
            let store = try ContactStore(path: path)
            try store.saveLocal([Contact(name: "Ada Lovelace")])
            #expect(try store.releaseFreePages() == 0)
            let (size, free) = try await store.queue.read { db in
                (
                    try Int.fetchOne(db, sql: "PRAGMA page_size"),
                    try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
                )
            }
            #expect(size == 1024 && free > 100)
            #expect(try store.contacts().map(\.name) == ["Ada Lovelace"])
        }
    }

    @Test("opening a device file again writes nothing to it: its page size and auto-vacuum are already set")
    func reopeningWritesNothing() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/device.sqlite"
            let store = try ContactStore(path: path)
            try store.saveLocal([Contact(name: "Ada Lovelace")])
            try store.queue.close()
            // Closing leaves the small log for the next opening (LogOnCloseTests).
            let (file, logged) = (fileBytes(path), store.logBytes)

            let again = try ContactStore(path: path)
            #expect(again.logBytes == logged, "opening wrote \(again.logBytes - logged) bytes to the log")
            #expect(fileBytes(path) == file, "opening changed the file's size")
            let (size, autoVacuum) = try await again.queue.read { db in
                (try Int.fetchOne(db, sql: "PRAGMA page_size"), try Int.fetchOne(db, sql: "PRAGMA auto_vacuum"))
            }
            #expect(size == ContactStore.pageSize && autoVacuum == 2)
            #expect(try again.contacts().map(\.name) == ["Ada Lovelace"])
        }
    }

    private func pragma(_ name: String, _ device: ContactsDevice) throws -> Int {
        try device.store.queue.read { db in try Int.fetchOne(db, sql: "PRAGMA \(name)") ?? -1 }
    }
}
