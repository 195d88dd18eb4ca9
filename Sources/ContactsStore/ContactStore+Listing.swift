import ContactsModel
import Foundation
import GRDB
import SyncCore

extension ContactStore {
    /// The list (``ContactListing``), in list order; only the first `limit` contacts when given, for a first
    /// screen that need not wait for the whole list. Read a row at a time into the packed columns, so a
    /// million contacts are never held as a million values.
    package func listing(limit: Int? = nil) throws -> ContactListing {
        try queue.read { db in
            let zones = try Self.bookZones(db)
            // The room the list takes, asked first (the sort keys' total from their index, 60 ms at a million).
            let count = min(limit ?? .max, try Int.fetchOne(db, sql: "SELECT n FROM contactCount") ?? 0)
            let keyBytes =
                limit == nil
                ? try Int.fetchOne(db, sql: "SELECT CAST(total(length(CAST(sortKey AS BLOB))) AS INTEGER) FROM contact")
                    ?? 0
                : count * 16
            var listing = ContactListing(reservingCapacity: count, keyBytes: keyBytes)
            // LIMIT -1 is no limit.
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT id, \(StoredContactName.sqlName)(json), sortKey, book, hasPhoto
                    FROM contact ORDER BY sortKey, id LIMIT ?
                    """,
                arguments: [limit ?? -1])
            while let row = try rows.next() {
                guard let id = RecordKey.id(row[0]), let zoneID = zones[row[3]] else { continue }
                try row.withUnsafeData(atIndex: 1) { name in
                    try row.withUnsafeData(atIndex: 2) { key in
                        listing.append(
                            id: id, name: name ?? Data(), sortKey: key ?? Data(), book: zoneID, hasPhoto: row[4])
                    }
                }
            }
            return listing
        }
    }

    /// Hands `body` each contact `search` finds, with its sort key and rank (``ContactsModel/ContactSearch/rank(bytes:from:to:bookName:)``:
    /// every field, as the command line searches), in the table's order, not the list's (a scan of the table
    /// without its index, the fastest way through every row); only those of `book` when given. Stops when
    /// `body` returns false, or `isCancelled` (asked every few thousand rows) says so. The sort key's bytes
    /// are the body's only while it runs.
    package func forEachMatch(
        of search: ContactSearch, in book: RecordZone.ID? = nil, isCancelled: () -> Bool = { false },
        _ body: (_ id: UUID, _ sortKey: UnsafeBufferPointer<UInt8>, _ rank: Int) throws -> Bool
    ) throws {
        let bookNames = Dictionary(try books().map { ($0.zoneID, $0.name) }, uniquingKeysWith: { a, _ in a })
        try queue.read { db in
            let zones = try Self.bookZones(db)
            let bookNumber = try book.map { book in
                try Int64.fetchOne(
                    db, sql: "SELECT n FROM bookNumber WHERE zoneName = ? AND ownerName = ?",
                    arguments: [book.zoneName, book.ownerName])
            }
            if bookNumber == .some(nil) { return }
            let rows = try Row.fetchCursor(db, sql: "SELECT id, sortKey, searchText, book FROM contact")
            var text: [UInt8] = []
            var read = 0
            while let row = try rows.next() {
                read += 1
                if read % 4096 == 0 && isCancelled() { return }
                let number: Int64 = row[3]
                if let bookNumber, number != bookNumber { continue }
                let keepGoing: Bool = try row.withUnsafeData(atIndex: 1) { key in
                    let key = key ?? Data()
                    let rank: Int? = try row.withUnsafeData(atIndex: 2) { stored in
                        text.removeAll(keepingCapacity: true)
                        Contact.appendSearchText(nameKey: key, stored: stored ?? Data(), to: &text)
                        return text.withUnsafeBufferPointer {
                            search.rank(
                                bytes: $0, from: 0, to: $0.count, bookName: zones[number].flatMap { bookNames[$0] })
                        }
                    }
                    guard let rank, let id = RecordKey.id(row[0]) else { return true }
                    return try key.withUnsafeBytes { try body(id, $0.bindMemory(to: UInt8.self), rank) }
                }
                if !keepGoing { return }
            }
        }
    }
}
