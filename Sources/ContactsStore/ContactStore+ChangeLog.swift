import ContactsModel
import Foundation
import GRDB
import SyncCore

/// A member of a book as the change log knows it: the contact, the change that last touched it there,
/// and the name a client gave its resource (nil: the contact's ID).
package struct LoggedMember: Sendable, Hashable {
    package var id: UUID
    /// The sequence number of the last change to the contact in this book: a strong validator, since
    /// every change to the stored contact takes a new one.
    package var change: Int64
    package var resourceName: String?
    /// False for a contact that left the book (deleted, or moved to another).
    package var present: Bool
}

/// The per-book change log that CardDAV's sync tokens stand on (RFC 6578): every contact's latest change,
/// numbered from one sequence, removals included. Kept by triggers on the contact table, so that every
/// path that writes contacts (edits, imports, fetched records, a wipe) is logged in its own transaction
/// without knowing of it; and begun only by the first bridge on a device, so that devices without one
/// pay nothing for it.
///
/// Also the names DAV clients gave contacts' resources (`PUT /…/ann.vcf`), kept after a contact goes so
/// that its removal is reported under the name the client knows.
extension ContactStore {
    /// Creates the log (once; each later call only returns its epoch) with every contact as of now.
    @discardableResult
    package func startChangeLog() throws -> String {
        try write { transaction in
            let db = transaction.db
            if let epoch = try Self.setting(.changeLogEpoch, db), try db.tableExists("contactChange") { return epoch }
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS contactChange (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT, id BLOB NOT NULL, zoneName TEXT NOT NULL,
                        ownerName TEXT NOT NULL, present INTEGER NOT NULL);
                    CREATE UNIQUE INDEX IF NOT EXISTS contactChangeMember ON contactChange(zoneName, ownerName, id);
                    CREATE INDEX IF NOT EXISTS contactChangeBook ON contactChange(zoneName, ownerName, seq);
                    CREATE TABLE IF NOT EXISTS resourceName (
                        id BLOB PRIMARY KEY, zoneName TEXT NOT NULL, ownerName TEXT NOT NULL, name TEXT NOT NULL);
                    CREATE UNIQUE INDEX IF NOT EXISTS resourceNameInBook ON resourceName(zoneName, ownerName, name);
                    \(Self.changeLogTriggers)
                    DELETE FROM contactChange;
                    INSERT INTO contactChange (id, zoneName, ownerName, present)
                        SELECT c.id, b.zoneName, b.ownerName, 1 FROM contact c JOIN bookNumber b ON b.n = c.book
                        ORDER BY b.zoneName, b.ownerName, c.sortKey;
                    """)
            let epoch = Hexadecimal.lowercase((0..<8).map { _ in UInt8.random(in: 0...255) })
            try Self.setSetting(.changeLogEpoch, epoch, db)
            return epoch
        }
    }

    /// The triggers that log every change to a contact in its book (made by the first bridge, and again
    /// with the contacts' table).
    static let changeLogTriggers = """
        CREATE TRIGGER IF NOT EXISTS contactChangeAdded AFTER INSERT ON contact BEGIN
            \(logChange("new", present: true))
        END;
        CREATE TRIGGER IF NOT EXISTS contactChangeMoved AFTER UPDATE ON contact
            WHEN old.book IS NOT new.book
            BEGIN
                \(logChange("old", present: false))
            END;
        CREATE TRIGGER IF NOT EXISTS contactChangeEdited AFTER UPDATE ON contact
            WHEN old.json IS NOT new.json OR old.book IS NOT new.book
            BEGIN
                \(logChange("new", present: true))
            END;
        CREATE TRIGGER IF NOT EXISTS contactChangeRemoved AFTER DELETE ON contact BEGIN
            \(logChange("old", present: false))
        END;
        """

    /// A trigger's statements that make `row`'s contact the latest change of its book. A delete and an insert,
    /// not INSERT OR REPLACE: the statement that fires a trigger decides conflicts for the trigger's own (an
    /// upsert's would fail it).
    private static func logChange(_ row: String, present: Bool) -> String {
        """
        DELETE FROM contactChange WHERE id = \(row).id
            AND zoneName = (SELECT zoneName FROM bookNumber WHERE n = \(row).book)
            AND ownerName = (SELECT ownerName FROM bookNumber WHERE n = \(row).book);
        INSERT INTO contactChange (id, zoneName, ownerName, present)
            SELECT \(row).id, zoneName, ownerName, \(present ? 1 : 0) FROM bookNumber WHERE n = \(row).book;
        """
    }

    /// The book's present members, in list order (the first `limit` when given). Read row by row: a
    /// million rows held at once took about 500 MB where the members take a tenth of it. A limit stops
    /// the read early (``membersInListOrder(afterOne:)``).
    package func members(of book: RecordZone.ID, limit: Int? = nil) throws -> [LoggedMember] {
        try queue.read { db in
            let rows = try Row.fetchCursor(
                db, sql: Self.membersInListOrder(afterOne: false),
                arguments: [book.zoneName, book.ownerName, limit ?? -1])
            return try Array(rows.compactMap(Self.member(present: true)))
        }
    }

    /// The book's present members in list order, `pageSize` at a time, each page read on its own: a
    /// listing of a million members is sent as it is read, never held, and no read stays open while a
    /// page is sent. A contact renamed between two pages may be listed twice or not at all; the
    /// client's next sync has it.
    package func forEachPageOfMembers(
        of book: RecordZone.ID, pageSize: Int, _ body: ([LoggedMember]) async throws -> Void
    ) async throws {
        var after: (sortKey: String, id: DatabaseValue)?
        while true {
            var arguments: StatementArguments = [book.zoneName, book.ownerName, pageSize]
            if let after { arguments += [after.sortKey, after.id] }
            let (page, last, read) = try await queue.read { [arguments, after] db in
                let rows = try Row.fetchAll(
                    db, sql: Self.membersInListOrder(afterOne: after != nil), arguments: arguments)
                let last = rows.last.map { (sortKey: $0["sortKey"] as String, id: $0["id"] as DatabaseValue) }
                return (rows.compactMap(Self.member(present: true)), last, rows.count)
            }
            if !page.isEmpty { try await body(page) }
            guard read == pageSize, let last else { return }
            after = last
        }
    }

    /// The book's present members in list order (its ID, change, resource name and sort key), from
    /// arguments zone name, owner name and limit (`?1` to `?3`), and with `afterOne` only those after
    /// the sort key and ID `?4` and `?5`. Read by the list's own index: `CROSS JOIN` keeps SQLite from
    /// starting at the log instead, which sorts the whole book before the first row.
    private static func membersInListOrder(afterOne: Bool) -> String {
        """
        SELECT c.id, ch.seq, n.name, c.sortKey FROM contact c
        CROSS JOIN contactChange ch ON ch.zoneName = ?1 AND ch.ownerName = ?2 AND ch.id = c.id
        LEFT JOIN resourceName n ON n.id = c.id AND n.zoneName = ?1 AND n.ownerName = ?2
        WHERE c.book = (SELECT n FROM bookNumber WHERE zoneName = ?1 AND ownerName = ?2)
            \(afterOne ? "AND (c.sortKey, c.id) > (?4, ?5)" : "")
        ORDER BY c.sortKey, c.id LIMIT ?3
        """
    }

    /// The present member of each contact in `book`, in one read (nil for one not there).
    package func members(_ ids: [UUID], in book: RecordZone.ID) throws -> [LoggedMember?] {
        try queue.read { db in
            try ids.map { id in try Self.member(id, in: book, db).flatMap { $0.present ? $0 : nil } }
        }
    }

    /// What changed in the book after change `after`, oldest first, at most `limit`; removals included.
    package func changes(in book: RecordZone.ID, after: Int64, limit: Int) throws -> [LoggedMember] {
        try queue.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT ch.id, ch.seq, n.name, ch.present FROM contactChange ch
                    LEFT JOIN resourceName n ON n.id = ch.id AND n.zoneName = ch.zoneName AND n.ownerName = ch.ownerName
                    WHERE ch.zoneName = ? AND ch.ownerName = ? AND ch.seq > ? ORDER BY ch.seq LIMIT ?
                    """, arguments: [book.zoneName, book.ownerName, after, limit]
            ).compactMap(Self.member(present: nil))
        }
    }

    /// The book's member named `name` (a client's name, or `<ID>.vcf` for a contact no client named), present
    /// or removed.
    package func member(named name: String, in book: RecordZone.ID) throws -> LoggedMember? {
        try queue.read { db in try Self.member(named: name, in: book, db) }
    }

    /// ``member(named:in:)`` of each name, in one read: a client's multiget of thousands of cards looks each
    /// up by its key, whatever the size of the book.
    package func members(named names: [String], in book: RecordZone.ID) throws -> [LoggedMember?] {
        try queue.read { db in try names.map { try Self.member(named: $0, in: book, db) } }
    }

    static func member(named name: String, in book: RecordZone.ID, _ db: GRDB.Database) throws -> LoggedMember? {
        let named = try DatabaseValue.fetchOne(
            db, sql: "SELECT id FROM resourceName WHERE zoneName = ? AND ownerName = ? AND name = ?",
            arguments: [book.zoneName, book.ownerName, name]
        ).flatMap(RecordKey.id)
        let byID = name.hasSuffix(".vcf") ? UUID(canonical: String(name.dropLast(4))) : nil
        guard let id = named ?? byID else { return nil }
        let member = try Self.member(id, in: book, db)
        // A contact a client named is not also at `<ID>.vcf`.
        return named == nil && member?.resourceName != nil ? nil : member
    }

    /// The contact's member in `book` (its latest change there), as logged in this transaction.
    static func member(_ id: UUID, in book: RecordZone.ID, _ db: GRDB.Database) throws -> LoggedMember? {
        try Row.fetchOne(
            db,
            sql: """
                SELECT ch.id, ch.seq, n.name, ch.present FROM contactChange ch
                LEFT JOIN resourceName n ON n.id = ch.id AND n.zoneName = ch.zoneName AND n.ownerName = ch.ownerName
                WHERE ch.zoneName = ? AND ch.ownerName = ? AND ch.id = ?
                """, arguments: [book.zoneName, book.ownerName, RecordKey.key(id)]
        ).flatMap(Self.member(present: nil))
    }

    /// The latest change in the book (0 before any).
    package func latestChange(in book: RecordZone.ID) throws -> Int64 {
        try queue.read { db in try Self.latestChange(in: book, db) }
    }

    static func latestChange(in book: RecordZone.ID, _ db: GRDB.Database) throws -> Int64 {
        try Int64.fetchOne(
            db, sql: "SELECT MAX(seq) FROM contactChange WHERE zoneName = ? AND ownerName = ?",
            arguments: [book.zoneName, book.ownerName]) ?? 0
    }

    /// Names the contact's resource in its book; a name another contact had there passes to this one.
    static func nameResource(_ id: UUID, _ name: String, in book: RecordZone.ID, _ db: GRDB.Database) throws {
        try db.execute(
            sql: "DELETE FROM resourceName WHERE (zoneName = ? AND ownerName = ? AND name = ?) OR id = ?",
            arguments: [book.zoneName, book.ownerName, name, RecordKey.key(id)])
        try db.execute(
            sql: "INSERT INTO resourceName (id, zoneName, ownerName, name) VALUES (?, ?, ?, ?)",
            arguments: [RecordKey.key(id), book.zoneName, book.ownerName, name])
    }

    static func member(present: Bool?) -> (Row) -> LoggedMember? {
        { row in
            guard let id = RecordKey.id(row["id"]) else { return nil }
            return LoggedMember(
                id: id, change: row["seq"], resourceName: row["name"], present: present ?? row["present"])
        }
    }
}
