import ContactsModel
import Foundation
import GRDB
import SyncCore

extension ContactStore {
    /// Hands `body` every contact in list order, read one at a time (a large store is never held whole),
    /// until it returns false: only those `search` matches, and those of `book`, when given.
    func forEachContact(
        matching search: ContactSearch? = nil, in book: RecordZone.ID? = nil, _ body: (Contact) throws -> Bool
    ) throws {
        guard let search else {
            return try queue.read { db in
                if let book { return try Self.forEachContact(in: book, db, body) }
                let rows = try Data.fetchCursor(db, sql: "SELECT json FROM contact ORDER BY sortKey, id")
                while let data = try rows.next() {
                    guard try body(try ContactFormat.decode(data)) else { return }
                }
            }
        }
        let bookNames = Dictionary(try books().map { ($0.zoneID, $0.name) }, uniquingKeysWith: { a, _ in a })
        try queue.read { db in
            let zones = try Self.bookZones(db)
            let rows = try Row.fetchCursor(
                db, sql: "SELECT json, sortKey, searchText, book FROM contact ORDER BY sortKey, id")
            while let row = try rows.next() {
                guard let zoneID = zones[row["book"]] else { continue }
                if let book, zoneID != book { continue }
                var text = Contact.searchText(nameKey: row["sortKey"], stored: row["searchText"])
                let matches = text.withUTF8 {
                    search.matches(bytes: $0, from: 0, to: $0.count, bookName: bookNames[zoneID])
                }
                if matches, try !body(try ContactFormat.decode(row["json"])) { return }
            }
        }
    }

    /// Hands `body` every contact of `book` in list order, read one at a time, until it returns false.
    static func forEachContact(in book: RecordZone.ID, _ db: GRDB.Database, _ body: (Contact) throws -> Bool)
        throws
    {
        let rows = try Data.fetchCursor(
            db, sql: "SELECT json FROM contact WHERE book = \(bookNumberOf) ORDER BY sortKey, id",
            arguments: [book.zoneName, book.ownerName])
        while let data = try rows.next() {
            guard try body(try ContactFormat.decode(data)) else { return }
        }
    }

    /// The contacts `search` matches, in list order; only those of `book` when given. Reads only the
    /// contacts that match.
    package func contacts(matching search: ContactSearch?, in book: RecordZone.ID? = nil) throws -> [Contact] {
        var found: [Contact] = []
        try forEachContact(matching: search, in: book) { contact in
            found.append(contact)
            return true
        }
        return found
    }

    /// The first contact, in list order, with `address` among its emails (letter case aside).
    package func contact(withEmail address: String) throws -> Contact? {
        let wanted = address.lowercased()
        var found: Contact?
        try forEachContact { contact in
            if contact.emails.contains(where: { $0.value.lowercased() == wanted }) { found = contact }
            return found == nil
        }
        return found
    }
}
