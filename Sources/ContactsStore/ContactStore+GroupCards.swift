import ContactsModel
import Foundation
import GRDB
import SyncCore

/// A group card as the device keeps it for the CardDAV bridge: its ID (its key in the change log and among
/// the resources' names), the group it stands for, and the members' UIDs a client's card named that no
/// contact of the book has yet (joined when one arrives).
package struct StoredGroupCard: Sendable, Hashable {
    package var id: UUID
    /// The group's sort key (``ContactsModel/Contact/sortKey(_:)`` of its name): one card per group.
    package var key: String
    package var card: ContactGroupCard
    package var pending: [String]
    package var present: Bool
    /// Whether a client wrote it: such a card stays while its group has no members (a group just made on a
    /// phone, or one whose members are still to come) until a client deletes it; one made from the app's
    /// groups goes when its last member leaves.
    package var written: Bool
}

/// Group cards for the CardDAV clients that want them (``ContactsModel/ContactGroupCard``). A group is a name
/// on each of its members, synced with them; its card is made from them here, on the device the bridge
/// runs on. Each card has an entry in the change log like a contact's, so that its ETag changes, and
/// sync-collection reports it, when its name or members do; the entries are brought up to date
/// (``refreshGroupCards(in:)``) before the bridge answers a client that wants group cards, by one read of
/// the book, and only when the book changed since.
extension ContactStore {
    /// Creates the group cards' tables, once (with the change log, which they stand on).
    package func startGroupCards() throws {
        try write { transaction in
            try transaction.db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS groupCard (
                        id BLOB PRIMARY KEY, zoneName TEXT NOT NULL, ownerName TEXT NOT NULL, key TEXT NOT NULL,
                        name TEXT NOT NULL, uid TEXT NOT NULL, members TEXT NOT NULL, pending TEXT NOT NULL,
                        present INTEGER NOT NULL, written INTEGER NOT NULL);
                    CREATE UNIQUE INDEX IF NOT EXISTS groupCardKey ON groupCard(zoneName, ownerName, key);
                    CREATE TABLE IF NOT EXISTS groupCardMark (
                        zoneName TEXT NOT NULL, ownerName TEXT NOT NULL, upTo INTEGER NOT NULL,
                        PRIMARY KEY (zoneName, ownerName));
                    """)
        }
    }

    /// Brings the book's group cards up to date with its contacts' groups: a group with a new name or other
    /// members gets a new change, one no contact is in any more is logged as removed. Reads the book only
    /// when it changed since the last time.
    package func refreshGroupCards(in book: RecordZone.ID) throws {
        try write { transaction in try Self.refreshGroupCards(in: book, transaction.db) }
    }

    static func refreshGroupCards(in book: RecordZone.ID, _ db: GRDB.Database) throws {
        let arguments: StatementArguments = [book.zoneName, book.ownerName]
        let latest = try latestChange(in: book, db)
        let mark = try Int64.fetchOne(
            db, sql: "SELECT upTo FROM groupCardMark WHERE zoneName = ? AND ownerName = ?", arguments: arguments)
        if let mark, mark >= latest { return }
        // The groups as the contacts have them: name (as first written) and members' UIDs, by sort key.
        var groups: [String: (name: String, members: [String])] = [:]
        try forEachContact(in: book, db) { contact in
            guard !contact.groups.isEmpty else { return true }
            let uid = ContactGroupCard.memberUID(of: contact)
            for group in contact.groups {
                groups[Contact.sortKey(group), default: (group, [])].members.append(uid)
            }
            return true
        }
        var stored = Dictionary(
            try groupCards(in: book, db).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let logged = Set(
            try DatabaseValue.fetchAll(
                db,
                sql: """
                    SELECT ch.id FROM contactChange ch JOIN groupCard g ON g.id = ch.id
                    WHERE ch.zoneName = ? AND ch.ownerName = ? AND ch.present = 1
                    """, arguments: arguments
            ).compactMap(RecordKey.id))
        for (key, group) in groups {
            var card =
                stored.removeValue(forKey: key)
                ?? StoredGroupCard(
                    id: .random(), key: key, card: ContactGroupCard(name: group.name, uid: "", members: []),
                    pending: [], present: false, written: false)
            if card.card.uid.isEmpty { card.card.uid = card.id.canonicalString }
            let before = card
            card.card.name = group.name
            card.card.members = group.members
            card.pending.removeAll { group.members.contains($0) }
            card.present = true
            if card != before || !logged.contains(card.id) {
                try putGroupCard(card, in: book, db)
                try logGroupCardChange(card.id, in: book, present: true, db)
            }
        }
        for card in stored.values where card.present {
            var left = card
            left.card.members = []
            left.present = card.written
            guard left != card || !logged.contains(card.id) else { continue }
            try putGroupCard(left, in: book, db)
            try logGroupCardChange(card.id, in: book, present: left.present, db)
        }
        let upTo = try latestChange(in: book, db)
        try db.execute(
            sql: "INSERT OR REPLACE INTO groupCardMark (zoneName, ownerName, upTo) VALUES (?, ?, ?)",
            arguments: [book.zoneName, book.ownerName, upTo])
    }

    /// The book's group cards, present and removed.
    static func groupCards(in book: RecordZone.ID, _ db: GRDB.Database) throws -> [StoredGroupCard] {
        try Row.fetchAll(
            db, sql: "SELECT * FROM groupCard WHERE zoneName = ? AND ownerName = ?",
            arguments: [book.zoneName, book.ownerName]
        ).compactMap(groupCard)
    }

    /// The group card of `id` in `book`, present or removed; nil for a contact's ID.
    static func groupCard(_ id: UUID, in book: RecordZone.ID, _ db: GRDB.Database) throws -> StoredGroupCard? {
        try Row.fetchOne(
            db, sql: "SELECT * FROM groupCard WHERE id = ? AND zoneName = ? AND ownerName = ?",
            arguments: [RecordKey.key(id), book.zoneName, book.ownerName]
        ).flatMap(groupCard)
    }

    private static func groupCard(_ row: Row) -> StoredGroupCard? {
        guard let id = RecordKey.id(row["id"]) else { return nil }
        func list(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }
        return StoredGroupCard(
            id: id, key: row["key"],
            card: ContactGroupCard(name: row["name"], uid: row["uid"], members: list(row["members"])),
            pending: list(row["pending"]), present: row["present"], written: row["written"])
    }

    static func putGroupCard(_ card: StoredGroupCard, in book: RecordZone.ID, _ db: GRDB.Database) throws {
        // Another row of the same group (a card removed, then written again under a new ID) gives way.
        try db.execute(
            sql: "DELETE FROM groupCard WHERE zoneName = ? AND ownerName = ? AND key = ? AND id != ?",
            arguments: [book.zoneName, book.ownerName, card.key, RecordKey.key(card.id)])
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO groupCard
                    (id, zoneName, ownerName, key, name, uid, members, pending, present, written)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                RecordKey.key(card.id), book.zoneName, book.ownerName, card.key, card.card.name, card.card.uid,
                card.card.members.joined(separator: "\n"), card.pending.joined(separator: "\n"), card.present,
                card.written,
            ])
    }

    /// Makes the group card's change the latest of its book, as the triggers do for a contact.
    static func logGroupCardChange(_ id: UUID, in book: RecordZone.ID, present: Bool, _ db: GRDB.Database) throws {
        try db.execute(
            sql: "DELETE FROM contactChange WHERE id = ? AND zoneName = ? AND ownerName = ?",
            arguments: [RecordKey.key(id), book.zoneName, book.ownerName])
        try db.execute(
            sql: "INSERT INTO contactChange (id, zoneName, ownerName, present) VALUES (?, ?, ?, ?)",
            arguments: [RecordKey.key(id), book.zoneName, book.ownerName, present])
    }

    /// The book's present group cards as members of the change log.
    package func groupCardMembers(of book: RecordZone.ID) throws -> [LoggedMember] {
        try queue.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT ch.id, ch.seq, n.name, ch.present FROM groupCard g
                    JOIN contactChange ch ON ch.id = g.id AND ch.zoneName = g.zoneName AND ch.ownerName = g.ownerName
                    LEFT JOIN resourceName n ON n.id = g.id AND n.zoneName = g.zoneName AND n.ownerName = g.ownerName
                    WHERE g.zoneName = ? AND g.ownerName = ? AND g.present = 1 ORDER BY g.key
                    """, arguments: [book.zoneName, book.ownerName]
            ).compactMap(Self.member(present: nil))
        }
    }

    /// The group cards among `ids` in `book`, by ID (contacts' IDs are not among them).
    package func groupCards(_ ids: [UUID], in book: RecordZone.ID) throws -> [UUID: StoredGroupCard] {
        try queue.read { db in
            var cards: [UUID: StoredGroupCard] = [:]
            for id in ids { if let card = try Self.groupCard(id, in: book, db) { cards[id] = card } }
            return cards
        }
    }

    /// The IDs of every group card the book has had: what a client that does not want group cards is not
    /// shown of the change log.
    package func groupCardIDs(in book: RecordZone.ID) throws -> Set<UUID> {
        try queue.read { db in
            Set(try Self.groupCards(in: book, db).map(\.id))
        }
    }
}
