import Foundation
import GRDB
import SyncCore
import SyncServer

/// The bare-SQLite reference of `sync-bench server`: the rows the server stores for the same records, inserted
/// into a file with the server's schema and connection settings, one transaction a batch, then read back a page
/// at a time in change order, all in this process. No HTTP, no JSON, no checks: what SQLite itself allows on
/// this machine for the same rows.
enum SQLiteReference {
    struct Figures {
        var upload: Double
        var download: Double
        /// CPU seconds this process spent each way.
        var uploadCPU: Double
        var downloadCPU: Double
    }

    /// - Parameter accounts: each account's records.
    static func measure(_ accounts: [[RecordValue]], batch: Int, page: Int) throws -> Figures {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-bench-sqlite-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("reference.sqlite").path
        _ = try SQLiteRecordStore(path: path)  // creates the server's schema
        // The server's checkpoints too: off the writer, on a connection of their own.
        let checkpointer = WALCheckpointer()
        let pool = try DatabasePool(
            path: path, configuration: SQLiteRecordStore.configuration(checkpointer: checkpointer))
        try checkpointer.start(path: path)

        // What the server writes for a new record (its planner's columns), the fields already encoded.
        let owners = accounts.map { _ in "_" + UUID().uuidString.lowercased() }
        let zoneName = accounts.first?.first?.recordID.zoneID.zoneName ?? ""
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let rows = zip(owners, accounts).map { owner, records in
            records.enumerated().map { index, record in
                let seq = Int64(index + 1)
                return StoredRecord(
                    key: RecordKey(zoneName: record.recordID.zoneID.zoneName, recordName: record.recordID.recordName),
                    recordType: record.recordType, fields: FieldCoding.encode(record.fields),
                    changeTag: String(seq, radix: 36), createdAt: now, creator: owner, modifiedAt: now, modifier: owner,
                    seq: seq, isDeleted: false)
            }
        }
        let count = rows.reduce(0) { $0 + $1.count }

        var cpu = BenchSupport.cpuSeconds(of: "self")
        func cpuSince() -> Double {
            let now = BenchSupport.cpuSeconds(of: "self")
            defer { cpu = now }
            return now - cpu
        }
        // The server's own statement, one transaction a batch, as each request is.
        let uploadStart = ContinuousClock.now
        for (owner, ownRows) in zip(owners, rows) {
            for start in stride(from: 0, to: ownRows.count, by: batch) {
                try pool.write { db in
                    try SQLiteRecordStore.writeRows(
                        Array(ownRows[start..<min(start + batch, ownRows.count)]), owner: owner, db)
                }
            }
        }
        let uploadTime = ContinuousClock.now - uploadStart
        let uploadCPU = cpuSince()

        let downloadStart = ContinuousClock.now
        var read = 0
        var bytes = 0
        for owner in owners {
            var after: Int64 = 0
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
