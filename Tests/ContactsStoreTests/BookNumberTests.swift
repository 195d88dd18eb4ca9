import ContactsModel
import ContactsTesting
import Foundation
import GRDB
import SyncCore
import SyncTesting
import Testing

@testable import ContactsStore

/// The contacts' table keeps each contact's book as a number (``ContactStore/bookNumber(_:_:)``); migration
/// v14 makes the table again from a file as 0.3 left it, CardDAV change log included.
@Suite("Contacts in numbered books")
struct BookNumberTests {
    static let family = RecordZone.ID(zoneName: "book-family", ownerName: "_0123456789abcdef0123456789abcdef")

    @Test("a 0.3 file with two books and a change log migrates: books, counts, members and changes as before")
    func migratesA03File() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/device.sqlite"
            let ada = Contact(name: "Ada Lovelace")
            let bob = Contact(name: "Bob Byte")
            let eve = Contact(name: "Eve Family")
            do {
                // The file as 0.3 left it: its migrations, its change log, its rows (IDs as text, books by name).
                let queue = try DatabaseQueue(path: path)
                try ContactStore.migrator.migrate(queue, upTo: "v13: the list's index by sort key alone")
                try await queue.write { db in
                    try db.execute(sql: Self.changeLogOf03)
                    for (contact, zone) in [(ada, Contact.zoneID), (bob, Contact.zoneID), (eve, Self.family)] {
                        try db.execute(
                            sql: """
                                INSERT INTO contact (id, name, sortKey, json, zoneName, ownerName, searchText, hasPhoto)
                                VALUES (?, ?, ?, ?, ?, ?, '', 0)
                                """,
                            arguments: [
                                contact.id.uuidString, contact.name, Contact.sortKey(contact.name),
                                ContactFormat.encode(contact), zone.zoneName, zone.ownerName,
                            ])
                    }
                    try db.execute(
                        sql: "INSERT INTO resourceName (id, zoneName, ownerName, name) VALUES (?, ?, ?, 'ada.vcf')",
                        arguments: [ada.id.uuidString, Contact.zoneID.zoneName, Contact.zoneID.ownerName])
                    try db.execute(sql: "INSERT INTO setting (key, value) VALUES ('changeLogEpoch', '0123')")
                }
                try queue.close()
            }

            let store = try ContactStore(path: path)
            let columns = try await store.queue.read { db in
                try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('contact')")
            }
            #expect(columns == ["id", "sortKey", "json", "book", "searchText", "hasPhoto"])
            #expect(try store.bookCounts() == [Contact.zoneID: 2, Self.family: 1])
            #expect(try store.summaries().map(\.zoneID) == [Contact.zoneID, Contact.zoneID, Self.family])
            #expect(try store.summaries().map(\.name) == ["Ada Lovelace", "Bob Byte", "Eve Family"])
            #expect(try store.contacts(in: Self.family).map(\.id) == [eve.id])
            #expect(try await store.queue.read { db in try ContactStore.book(of: eve.id, db) } == Self.family)
            #expect(try store.startChangeLog() == "0123", "the log is the one 0.3 kept")
            #expect(try store.members(of: Contact.zoneID).map(\.id) == [ada.id, bob.id])
            #expect(try store.member(named: "ada.vcf", in: Contact.zoneID)?.id == ada.id)
            #expect(try store.changes(in: Self.family, after: 0, limit: 10).map(\.id) == [eve.id])
            let before = try store.latestChange(in: Contact.zoneID)

            // The triggers made again log edits and removals in the contact's book.
            var edited = bob
            edited.notes = "edited after the upgrade"
            try store.saveLocal([edited])
            try store.write { transaction in try ContactStore.removeContact(ada.id, transaction.db) }
            let changes = try store.changes(in: Contact.zoneID, after: before, limit: 10)
            #expect(changes.map(\.id) == [bob.id, ada.id] && changes.map(\.present) == [true, false])
            #expect(try store.changes(in: Self.family, after: 0, limit: 10).map(\.id) == [eve.id])
            #expect(try store.bookCounts() == [Contact.zoneID: 1, Self.family: 1])
        }
    }

    @Test("a contact saved into a new book takes a number once; a known contact stays in its book")
    func numbers() async throws {
        try await withTemporaryDirectory { directory in
            let store = try ContactStore(path: directory + "/device.sqlite")
            let eve = Contact(name: "Eve Family")
            try store.write { transaction in
                try ContactStore.put(eve, in: Self.family, transaction.db)
                try ContactStore.put(Contact(name: "Fay Family"), in: Self.family, transaction.db)
                // Saved again with another book given: it stays where it is.
                try ContactStore.put(eve, in: Contact.zoneID, transaction.db)
                try ContactStore.put(Contact(name: "Ada Lovelace"), transaction.db)
            }
            let numbers = try await store.queue.read { db in
                try Row.fetchAll(db, sql: "SELECT n, zoneName FROM bookNumber ORDER BY n").map {
                    "\($0["n"] as Int64) \($0["zoneName"] as String)"
                }
            }
            #expect(numbers == ["1 Contacts", "2 book-family"])
            #expect(try store.bookCounts() == [Contact.zoneID: 1, Self.family: 2])
            #expect(try await store.queue.read { db in try ContactStore.book(of: eve.id, db) } == Self.family)
            #expect(try store.contacts(in: RecordZone.ID(zoneName: "book-none")).isEmpty)
            try store.write { transaction in try transaction.wipe(engineState: false) }
            #expect(try store.count() == 0)
            let left = try await store.queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM bookNumber") }
            #expect(left == 1, "a wipe keeps the default book's number only")
        }
    }

    /// The change log's tables and triggers as 0.3 made them (`startChangeLog`), with books by name.
    static let changeLogOf03 = """
        CREATE TABLE contactChange (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, zoneName TEXT NOT NULL,
            ownerName TEXT NOT NULL, present INTEGER NOT NULL);
        CREATE UNIQUE INDEX contactChangeMember ON contactChange(zoneName, ownerName, id);
        CREATE INDEX contactChangeBook ON contactChange(zoneName, ownerName, seq);
        CREATE TABLE resourceName (
            id TEXT PRIMARY KEY, zoneName TEXT NOT NULL, ownerName TEXT NOT NULL, name TEXT NOT NULL);
        CREATE UNIQUE INDEX resourceNameInBook ON resourceName(zoneName, ownerName, name);
        CREATE TRIGGER contactChangeAdded AFTER INSERT ON contact BEGIN
            DELETE FROM contactChange WHERE zoneName = new.zoneName AND ownerName = new.ownerName AND id = new.id;
            INSERT INTO contactChange (id, zoneName, ownerName, present) VALUES (new.id, new.zoneName, new.ownerName, 1);
        END;
        CREATE TRIGGER contactChangeMoved AFTER UPDATE ON contact
            WHEN old.zoneName IS NOT new.zoneName OR old.ownerName IS NOT new.ownerName
            BEGIN
                DELETE FROM contactChange WHERE zoneName = old.zoneName AND ownerName = old.ownerName AND id = old.id;
                INSERT INTO contactChange (id, zoneName, ownerName, present) VALUES (old.id, old.zoneName, old.ownerName, 0);
            END;
        CREATE TRIGGER contactChangeEdited AFTER UPDATE ON contact
            WHEN old.json IS NOT new.json OR old.zoneName IS NOT new.zoneName OR old.ownerName IS NOT new.ownerName
            BEGIN
                DELETE FROM contactChange WHERE zoneName = new.zoneName AND ownerName = new.ownerName AND id = new.id;
                INSERT INTO contactChange (id, zoneName, ownerName, present) VALUES (new.id, new.zoneName, new.ownerName, 1);
            END;
        CREATE TRIGGER contactChangeRemoved AFTER DELETE ON contact BEGIN
            DELETE FROM contactChange WHERE zoneName = old.zoneName AND ownerName = old.ownerName AND id = old.id;
            INSERT INTO contactChange (id, zoneName, ownerName, present) VALUES (old.id, old.zoneName, old.ownerName, 0);
        END;
        """
}
