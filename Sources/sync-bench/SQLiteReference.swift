import Foundation
import GRDB
import SyncCore
import SyncServer

/// The bare-SQLite reference of `sync-bench server` (``BareStorageReference``): the rows the server stores for the
/// same records, inserted into a file with the server's schema and connection settings, all in this process.
/// `sync-bench contacts` holds the server's side of its upload and download to the same (``ServerFile``).
enum SQLiteReference {
    /// A new file with the server's schema, opened with the server's connection settings and its checkpoints
    /// off the writer, on a connection of their own; removed with its directory by ``remove()``.
    struct ServerFile: BareStorage {
        let directory: URL
        let pool: DatabasePool
        private let checkpointer: WALCheckpointer

        var name: String { "SQLite" }
        var takesAccountsAtOnce: Bool { false }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-bench-sqlite-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("reference.sqlite").path
            _ = try SQLiteRecordStore(path: path)  // creates the server's schema
            checkpointer = WALCheckpointer()
            pool = try DatabasePool(
                path: path, configuration: SQLiteRecordStore.configuration(checkpointer: checkpointer))
            try checkpointer.start(path: path)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }

        func insert(_ batches: [[StoredRecord]], owner: String) throws -> Duration {
            let start = ContinuousClock.now
            for batch in batches {
                try pool.write { db in try SQLiteRecordStore.writeRows(batch, owner: owner, db) }
            }
            return ContinuousClock.now - start
        }

        func readPages(owner: String, zoneName: String, page: Int) throws -> (rows: Int, bytes: Int) {
            var after: Int64 = 0
            var read = 0
            var bytes = 0
            while true {
                let fetched = try pool.read { db in
                    try Row.fetchAll(
                        db,
                        sql: "SELECT * FROM record WHERE owner = ? AND zone_name = ? AND seq > ? ORDER BY seq LIMIT ?",
                        arguments: [owner, zoneName, after, page])
                }
                guard let last = fetched.last else { break }
                for row in fetched {
                    let fields: Data = row["fields"]
                    bytes += fields.count
                }
                after = last["seq"]
                read += fetched.count
            }
            return (read, bytes)
        }

        /// SQLite runs in this process.
        var runsOnPostgres: Bool { false }
    }

    /// - Parameter accounts: each account's records.
    static func measure(_ accounts: [[RecordValue]], batch: Int, page: Int) async throws
        -> BareStorageReference.Figures
    {
        let file = try ServerFile()
        defer { file.remove() }
        return try await BareStorageReference.measure(accounts, batch: batch, page: page, in: file)
    }
}
