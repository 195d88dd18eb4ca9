import ContactsModel
import Foundation
import GRDB
import SyncCore

extension ContactStore {
    /// How many rows a read of the whole list or a search through every field takes in one transaction: the
    /// store has one connection, and the app's other reads (the selected contact, the status pane's counts)
    /// wait for it, so a read of a million rows goes in steps of a few milliseconds each. After each step
    /// the connection gives back the pages it cached (``ContactStore/pageCacheKiB``, 32 MB, which a read of
    /// every row would otherwise fill and keep), as the next step reads other pages anyway.
    package static let readStep = 4_096

    /// The list (``ContactListing``), in list order; only the first `limit` contacts when given, for a first
    /// screen that need not wait for the whole list. Read a row at a time into the packed columns, so a
    /// million contacts are never held as a million values, in steps of ``readStep`` rows, each after the
    /// last one's sort key and ID (a change between two steps makes the app read the list again anyway).
    package func listing(limit: Int? = nil) throws -> ContactListing {
        var listing = try queue.read { db in
            // The room the list takes, asked first (the sort keys' total from their index, 60 ms at a million).
            let count = min(limit ?? .max, try Int.fetchOne(db, sql: "SELECT n FROM contactCount") ?? 0)
            let keyBytes =
                limit == nil
                ? try Int.fetchOne(
                    db, sql: "SELECT CAST(total(length(CAST(sortKey AS BLOB))) AS INTEGER) FROM contact") ?? 0
                : count * 16
            return ContactListing(reservingCapacity: count, keyBytes: keyBytes)
        }
        var last: (sortKey: DatabaseValue, id: DatabaseValue)?
        var wanted = limit ?? .max
        while wanted > 0 {
            let step = min(wanted, Self.readStep)
            let read = try queue.read { db in
                let zones = try Self.bookZones(db)
                let columns = "SELECT id, \(StoredContactName.sqlName)(json), sortKey, book, hasPhoto FROM contact"
                let rows =
                    try last.map { last in
                        try Row.fetchCursor(
                            db, sql: "\(columns) WHERE (sortKey, id) > (?, ?) ORDER BY sortKey, id LIMIT ?",
                            arguments: [last.sortKey, last.id, step])
                    }
                    ?? Row.fetchCursor(db, sql: "\(columns) ORDER BY sortKey, id LIMIT ?", arguments: [step])
                var read = 0
                while let row = try rows.next() {
                    read += 1
                    last = (row[2], row[0])
                    guard let id = RecordKey.id(row[0]), let zoneID = zones[row[3]] else { continue }
                    try row.withUnsafeData(atIndex: 1) { name in
                        try row.withUnsafeData(atIndex: 2) { key in
                            listing.append(
                                id: id, name: name ?? Data(), sortKey: key ?? Data(), book: zoneID, hasPhoto: row[4])
                        }
                    }
                }
                return read
            }
            queue.releaseMemory()
            wanted -= read
            if read < step { break }
        }
        return listing
    }

    /// Hands `body` each contact `search` finds, with its sort key and rank (``ContactsModel/ContactSearch/rank(bytes:from:to:bookName:)``:
    /// every field, as the command line searches), in the table's order, not the list's (a scan of the table
    /// without its index, the fastest way through every row), in steps of ``readStep`` rows; only those of
    /// `book` when given. Stops when `body` returns false, or `isCancelled` (asked at every step) says so.
    /// The sort key's bytes are the body's only while it runs.
    package func forEachMatch(
        of search: ContactSearch, in book: RecordZone.ID? = nil, isCancelled: () -> Bool = { false },
        _ body: (_ id: UUID, _ sortKey: UnsafeBufferPointer<UInt8>, _ rank: Int) throws -> Bool
    ) throws {
        let bookNames = Dictionary(try books().map { ($0.zoneID, $0.name) }, uniquingKeysWith: { a, _ in a })
        let bookNumber = try book.map { book in
            try queue.read { db in
                try Int64.fetchOne(
                    db, sql: "SELECT n FROM bookNumber WHERE zoneName = ? AND ownerName = ?",
                    arguments: [book.zoneName, book.ownerName])
            }
        }
        if bookNumber == .some(nil) { return }
        var text: [UInt8] = []
        var after: Int64 = 0
        while !isCancelled() {
            let (read, goOn) = try queue.read { db in
                let zones = try Self.bookZones(db)
                let rows = try Row.fetchCursor(
                    db,
                    sql:
                        "SELECT rowid, id, sortKey, searchText, book FROM contact WHERE rowid > ? ORDER BY rowid LIMIT ?",
                    arguments: [after, Self.readStep])
                var read = 0
                while let row = try rows.next() {
                    read += 1
                    after = row[0]
                    let number: Int64 = row[4]
                    if let bookNumber, number != bookNumber { continue }
                    let goOn: Bool = try row.withUnsafeData(atIndex: 2) { key in
                        let key = key ?? Data()
                        let rank: Int? = try row.withUnsafeData(atIndex: 3) { stored in
                            text.removeAll(keepingCapacity: true)
                            Contact.appendSearchText(nameKey: key, stored: stored ?? Data(), to: &text)
                            return text.withUnsafeBufferPointer {
                                search.rank(
                                    bytes: $0, from: 0, to: $0.count, bookName: zones[number].flatMap { bookNames[$0] })
                            }
                        }
                        guard let rank, let id = RecordKey.id(row[1]) else { return true }
                        return try key.withUnsafeBytes { try body(id, $0.bindMemory(to: UInt8.self), rank) }
                    }
                    if !goOn { return (read, false) }
                }
                return (read, true)
            }
            queue.releaseMemory()
            if !goOn || read < Self.readStep { return }
        }
    }
}
