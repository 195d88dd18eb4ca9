import ContactsStore
import Foundation
import GRDB

/// Bare SQLite for the contacts a `sync-bench contacts` run stored: the device's own rows of its `contact` table,
/// copied into a new file with that table and its list index as the device file declares them (no triggers, no
/// outbox, no server records), opened as the device's store opens its file. Each insert is one prepared
/// statement, one transaction a batch; the read is every row back in key order, as an upload reads them.
struct ContactsRowsReference {
    /// The device's file, whose rows and schema are copied.
    let source: String
    /// Where the copies are made.
    let directory: URL

    /// The columns the device writes for a contact (`ContactStore.put`).
    private static let columns = "id, sortKey, json, book, searchText, hasPhoto"
    /// Rows read from the device at a time, untimed: a multiple of every batch, and a bounded memory.
    private static let piece = 10_000

    /// How the device's file is laid out, read from it.
    private struct Layout {
        var schema: [String]
        var pageSize: Int
        var autoVacuum: Int
    }

    /// Inserts every row into a new file, `batch` rows a transaction; each commit flushed to the disk when
    /// `durable` (as an import's are), or not (as the pages of a download are, `synchronous = NORMAL`).
    /// - Returns: the seconds the transactions took (reading the device's rows is not counted), and the file.
    func insert(batch: Int, durable: Bool) throws -> (seconds: Double, file: String) {
        let device = try DatabaseQueue(path: source, configuration: Self.readOnly)
        let layout = try device.read { db in
            Layout(
                schema: try String.fetchAll(
                    db,
                    sql: "SELECT sql FROM sqlite_master WHERE tbl_name = 'contact' AND type IN ('table', 'index')"
                        + " AND sql IS NOT NULL ORDER BY type DESC"),
                pageSize: try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096,
                autoVacuum: try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") ?? 0)
        }
        guard layout.schema.count >= 2 else {
            throw BenchError(description: "\(source) has no contact table with its index: \(layout.schema)")
        }
        let file = directory.appendingPathComponent("rows-\(UUID()).sqlite").path
        let copy = try Self.open(file, layout: layout, durable: durable)
        try copy.write { db in
            for statement in layout.schema { try db.execute(sql: statement) }
        }
        let insert = "INSERT INTO contact (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?)"
        var elapsed = Duration.zero
        var after = Data()
        while true {
            let rows = try device.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT \(Self.columns) FROM contact WHERE id > ? ORDER BY id LIMIT ?",
                    arguments: [after, Self.piece])
            }
            guard let last = rows.last else { break }
            after = last["id"]
            let arguments = rows.map { StatementArguments($0.databaseValues) }
            for start in stride(from: 0, to: arguments.count, by: batch) {
                let clock = ContinuousClock.now
                try copy.write { db in
                    let statement = try db.cachedStatement(sql: insert)
                    for row in arguments[start..<min(start + batch, arguments.count)] {
                        try statement.execute(arguments: row)
                    }
                }
                elapsed += ContinuousClock.now - clock
            }
        }
        return (elapsed.inSeconds, file)
    }

    /// Reads every row of `file` (made by ``insert(batch:durable:)``) back in key order, on a new connection as
    /// a new `contacts sync` process has; the seconds it took.
    func read(_ file: String, expecting count: Int) throws -> Double {
        let copy = try DatabaseQueue(path: file, configuration: Self.readOnly)
        let start = ContinuousClock.now
        let (rows, bytes) = try copy.read { db in
            let cursor = try Row.fetchCursor(db, sql: "SELECT id, json FROM contact ORDER BY id")
            var rows = 0
            var bytes = 0
            while let row = try cursor.next() {
                let json: Data = row[1]
                bytes += json.count
                rows += 1
            }
            return (rows, bytes)
        }
        let seconds = (ContinuousClock.now - start).inSeconds
        guard rows == count, bytes > 0 else {
            throw BenchError(description: "the SQLite reference read \(rows) rows back of \(count)")
        }
        return seconds
    }

    private static var readOnly: Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        return configuration
    }

    /// A new file opened as `ContactStore.init` opens the device's: its page size and free-page policy the device
    /// file's, then WAL and the store's own page cache, checkpoint and log limit.
    private static func open(_ path: String, layout: Layout, durable: Bool) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            if try Int.fetchOne(db, sql: "PRAGMA page_count") == 0 {
                try db.execute(sql: "PRAGMA page_size = \(layout.pageSize)")
                try db.execute(sql: "PRAGMA auto_vacuum = \(layout.autoVacuum)")
            }
            try ContactStore.useLogAndCache(db)
            try db.execute(sql: "PRAGMA synchronous = \(durable ? "FULL" : "NORMAL")")
        }
        return try DatabaseQueue(path: path, configuration: configuration)
    }
}
