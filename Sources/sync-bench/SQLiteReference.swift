import Foundation
import GRDB
import SyncCore
import SyncServer

/// The bare-SQLite reference of `sync-bench server`: the rows the server stores for the same records, inserted
/// into a file with the server's schema and connection settings, one transaction a batch, then read back a page
/// at a time in change order, all in this process. No HTTP, no JSON, no checks: what SQLite itself allows on
/// this machine for the same rows. `sync-bench contacts` holds the server's side of its upload and download to
/// the same (``ServerFile``).
enum SQLiteReference {
    struct Figures {
        var upload: Double
        var download: Double
        /// CPU seconds this process spent each way.
        var uploadCPU: Double
        var downloadCPU: Double
    }

    /// A new file with the server's schema, opened with the server's connection settings and its checkpoints
    /// off the writer, on a connection of their own; removed with its directory by ``remove()``.
    struct ServerFile {
        let directory: URL
        let pool: DatabasePool
        private let checkpointer: WALCheckpointer

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

        /// The rows the server writes for new records of `owner` (its planner's columns), the fields encoded as
        /// it encodes them, numbered in change order from `firstSeq`.
        static func rows(_ records: [RecordValue], owner: String, firstSeq: Int64 = 1) -> [StoredRecord] {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            return records.enumerated().map { index, record in
                let seq = firstSeq + Int64(index)
                return StoredRecord(
                    key: RecordKey(zoneName: record.recordID.zoneID.zoneName, recordName: record.recordID.recordName),
                    recordType: record.recordType, fields: FieldCoding.encode(record.fields),
                    changeTag: String(seq, radix: 36), createdAt: now, creator: owner, modifiedAt: now, modifier: owner,
                    seq: seq, isDeleted: false)
            }
        }

        /// Inserts each batch in a transaction of its own with the server's own statement, as each request's
        /// rows are; the time it took.
        func insert(_ batches: [[StoredRecord]], owner: String) throws -> Duration {
            let start = ContinuousClock.now
            for batch in batches {
                try pool.write { db in try SQLiteRecordStore.writeRows(batch, owner: owner, db) }
            }
            return ContinuousClock.now - start
        }

        /// Reads `owner`'s rows of `zoneName` back in change order, `page` at a time, each page a read of its
        /// own, as a zone's changes are fetched; the rows and the fields' bytes read.
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
    }

    /// - Parameter accounts: each account's records.
    static func measure(_ accounts: [[RecordValue]], batch: Int, page: Int) throws -> Figures {
        let file = try ServerFile()
        defer { file.remove() }
        let owners = accounts.map { _ in "_" + UUID().uuidString.lowercased() }
        let zoneName = accounts.first?.first?.recordID.zoneID.zoneName ?? ""
        let rows = zip(owners, accounts).map { owner, records in ServerFile.rows(records, owner: owner) }
        let count = rows.reduce(0) { $0 + $1.count }

        var cpu = BenchSupport.cpuSeconds(of: "self")
        func cpuSince() -> Double {
            let now = BenchSupport.cpuSeconds(of: "self")
            defer { cpu = now }
            return now - cpu
        }
        // The server's own statement, one transaction a batch, as each request is.
        var uploadTime = Duration.zero
        for (owner, ownRows) in zip(owners, rows) {
            let batches = stride(from: 0, to: ownRows.count, by: batch).map {
                Array(ownRows[$0..<min($0 + batch, ownRows.count)])
            }
            uploadTime += try file.insert(batches, owner: owner)
        }
        let uploadCPU = cpuSince()

        let downloadStart = ContinuousClock.now
        var read = 0
        var bytes = 0
        for owner in owners {
            let pages = try file.readPages(owner: owner, zoneName: zoneName, page: page)
            read += pages.rows
            bytes += pages.bytes
        }
        let downloadTime = ContinuousClock.now - downloadStart
        guard read == count, bytes > 0 else {
            throw ReferenceError(description: "the SQLite reference read \(read) rows back of \(count)")
        }
        return Figures(
            upload: Double(count) / uploadTime.inSeconds, download: Double(count) / downloadTime.inSeconds,
            uploadCPU: uploadCPU, downloadCPU: cpuSince())
    }
}

/// A reference run that did not measure what it should have.
struct ReferenceError: Error, CustomStringConvertible {
    var description: String
}
