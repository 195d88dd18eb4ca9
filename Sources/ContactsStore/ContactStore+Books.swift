import ContactsModel
import Foundation
import GRDB
import SyncCore
import SyncKit

/// The address books a device knows: its own and those shared with it.
extension ContactStore {
    /// Every book: the default one first, then by name.
    package func books() throws -> [AddressBook] {
        try queue.read { db in try Self.books(db) }
    }

    package func book(_ zoneID: RecordZone.ID) throws -> AddressBook? {
        try queue.read { db in try Self.book(zoneID, db) }
    }

    /// How many contacts each book holds.
    package func bookCounts() throws -> [RecordZone.ID: Int] {
        try queue.read { db in
            let zones = try Self.bookZones(db)
            var counts: [RecordZone.ID: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT book, COUNT(*) AS n FROM contact GROUP BY book") {
                if let zoneID = zones[row["book"]] { counts[zoneID] = row["n"] }
            }
            return counts
        }
    }

    /// The book a contact is in; nil for a contact this device does not have.
    package func book(of id: UUID) throws -> AddressBook? {
        try queue.read { db in try Self.book(of: id, db).flatMap { try Self.book($0, db) } }
    }

    /// The book named `text` (letter case aside). A name that two books share (one's own "Family" and
    /// another's) is told apart as `NAME@OWNER`, the owner's account name.
    package func resolveBook(_ text: String) throws -> AddressBook {
        let books = try books()
        let wanted = text.trimmingCharacters(in: .whitespaces)
        var matches = books.filter { AddressBook.sameName($0.name, wanted) }
        if matches.isEmpty, let at = wanted.lastIndex(of: "@") {
            let name = String(wanted[..<at])
            let owner = String(wanted[wanted.index(after: at)...])
            matches = books.filter {
                AddressBook.sameName($0.name, name) && AddressBook.sameName($0.ownerUsername ?? "", owner)
            }
        }
        guard let first = matches.first else {
            throw DeviceError.noSuchBook(wanted, books: books.map(\.name))
        }
        guard matches.count == 1 else {
            throw DeviceError.ambiguousBook(
                wanted, candidates: matches.map { "\($0.name)@\($0.ownerUsername ?? "you")" })
        }
        return first
    }

    // MARK: Rows (inside transactions)

    static func books(_ db: GRDB.Database) throws -> [AddressBook] {
        let books = try Row.fetchAll(db, sql: "SELECT * FROM book").map(book(from:))
        return books.sorted { a, b in
            if a.isDefault != b.isDefault { return a.isDefault }
            return (Contact.sortKey(a.name), a.zoneID) < (Contact.sortKey(b.name), b.zoneID)
        }
    }

    static func book(_ zoneID: RecordZone.ID, _ db: GRDB.Database) throws -> AddressBook? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM book WHERE zoneName = ? AND ownerName = ?"),
            arguments: [zoneID.zoneName, zoneID.ownerName]
        ).map(book(from:))
    }

    /// The book `zoneID` names, or, for one this device has not heard of, ``AddressBook/unknown(_:)``.
    static func bookOrUnknown(_ zoneID: RecordZone.ID, _ db: GRDB.Database) throws -> AddressBook {
        try book(zoneID, db) ?? AddressBook.unknown(zoneID)
    }

    private static func book(from row: Row) -> AddressBook {
        let participants = (row["participants"] as Data?).flatMap {
            try? JSONDecoder().decode([ShareParticipant].self, from: $0)
        }
        return AddressBook(
            zoneID: RecordZone.ID(zoneName: row["zoneName"], ownerName: row["ownerName"]), name: row["name"],
            access: AddressBook.Access(rawValue: row["access"]) ?? .readOnly, ownerUsername: row["ownerUsername"],
            participants: participants ?? [])
    }

    static func putBook(_ book: AddressBook, _ db: GRDB.Database) throws {
        let participants = book.participants.isEmpty ? nil : try JSONEncoder().encode(book.participants)
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO book (zoneName, ownerName, name, access, ownerUsername, participants)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                book.zoneID.zoneName, book.zoneID.ownerName, book.name, book.access.rawValue, book.ownerUsername,
                participants,
            ])
    }

    /// The IDs of a book's contacts.
    static func contactIDs(in zoneID: RecordZone.ID, _ db: GRDB.Database) throws -> [String] {
        try DatabaseValue.fetchAll(
            db, sql: "SELECT id FROM contact WHERE book = \(bookNumberOf)",
            arguments: [zoneID.zoneName, zoneID.ownerName]
        ).compactMap(RecordKey.name)
    }
}

extension ContactStore.Transaction {
    /// Removes a book from this device: its contacts, its conflict log, their server records and
    /// everything of it that is pending (the default book stays, emptied).
    func removeBook(_ zoneID: RecordZone.ID) throws {
        try forgetServerRecords(of: zoneID)
        // One statement per call: GRDB binds the arguments to the first statement of a batch only.
        for condition in [
            "contact WHERE book = \(ContactStore.bookNumberOf)", "conflict WHERE zoneName = ? AND ownerName = ?",
        ] {
            try db.execute(sql: "DELETE FROM \(condition)", arguments: [zoneID.zoneName, zoneID.ownerName])
        }
        let entries = try Row.fetchAll(
            db, sql: "SELECT key, kind, version, zoneName, ownerName FROM outbox WHERE zoneName = ? AND ownerName = ?",
            arguments: [zoneID.zoneName, zoneID.ownerName]
        ).compactMap(OutboxEntry.init(row:))
        // A deletion of the zone stays queued: it is how a book is deleted, or left.
        for entry in entries {
            if case .zone(.deleteZone) = entry.change { continue }
            try settle(entry.change)
        }
        if zoneID != Contact.zoneID {
            try db.execute(
                sql: "DELETE FROM book WHERE zoneName = ? AND ownerName = ?",
                arguments: [zoneID.zoneName, zoneID.ownerName])
        }
    }

    /// Forgets the last known server records of a book's contacts and of its name.
    func forgetServerRecords(of zoneID: RecordZone.ID) throws {
        let book = AddressBook(zoneID: zoneID, name: "", access: .owner)
        for id in try ContactStore.contactIDs(in: zoneID, db) + [book.recordID.recordName] {
            try db.cachedStatement(sql: "DELETE FROM serverRecord WHERE id = ?").execute(
                arguments: [RecordKey.key(named: id)])
        }
    }

    /// Queues one of the person's books for upload: its zone, its name, every contact in it and its
    /// conflict log.
    func queueUpload(of book: AddressBook) throws {
        try enqueue(.zone(.saveZone(RecordZone(zoneID: book.zoneID))))
        // The default book needs no record until it is renamed (earlier versions wrote none).
        if !book.isDefault || book.name != AddressBook.defaultName { try enqueue(.record(.saveRecord(book.recordID))) }
        for id in try ContactStore.contactIDs(in: book.zoneID, db) {
            try enqueue(.record(.saveRecord(RecordValue.ID(recordName: id, zoneID: book.zoneID))))
        }
        for entry in try ContactStore.conflicts(in: book.zoneID, db) {
            try enqueue(.record(.saveRecord(entry.recordID)))
        }
        // The default book also carries the person's verifications (``VerifiedKeyRecord``).
        if book.zoneID == Contact.zoneID {
            for key in try ContactStore.verifiedKeys(db) {
                try enqueue(.record(.saveRecord(VerifiedKeyRecord.recordID(of: key.userRecordName))))
            }
        }
    }
}
