import Foundation
import SyncCore
import SyncServer

/// Storage used bare, as `sync-bench server`'s reference: the rows the server stores for the same records,
/// written with the server's own statement into the server's schema, and read back in change order. No HTTP,
/// no JSON, no checks: what the storage itself allows on this machine for the same rows.
protocol BareStorage {
    /// The storage's name in the figures: `SQLite`, `PostgreSQL`.
    var name: String { get }

    /// Inserts each batch in a transaction of its own with the server's own statement, as each request's rows
    /// are; the time it took.
    func insert(_ batches: [[StoredRecord]], owner: String) async throws -> Duration

    /// Reads `owner`'s rows of `zoneName` back in change order, `page` at a time, each page a read of its own,
    /// as a zone's changes are fetched; the rows and the fields' bytes read.
    func readPages(owner: String, zoneName: String, page: Int) async throws -> (rows: Int, bytes: Int)

    /// The CPU seconds the storage's work has cost so far: this process's, and the database server's when
    /// the storage has one.
    func cpuSeconds() -> Double
}

/// The figures of a ``BareStorage`` on the records of a `sync-bench server` run.
enum BareStorageReference {
    struct Figures {
        var upload: Double
        var download: Double
        /// The CPU seconds spent each way (``BareStorage/cpuSeconds()``).
        var uploadCPU: Double
        var downloadCPU: Double
    }

    /// The rows the server writes for new records of `owner` (its planner's columns), the fields encoded as it
    /// encodes them, numbered in change order from `firstSeq`.
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

    /// Every account's rows inserted into `storage` in batches of `batch`, one account after the other, then
    /// read back `page` at a time.
    /// - Parameter accounts: each account's records.
    static func measure(_ accounts: [[RecordValue]], batch: Int, page: Int, in storage: some BareStorage)
        async throws -> Figures
    {
        let owners = accounts.map { _ in "_" + UUID().uuidString.lowercased() }
        let zoneName = accounts.first?.first?.recordID.zoneID.zoneName ?? ""
        let rows = zip(owners, accounts).map { owner, records in Self.rows(records, owner: owner) }
        let count = rows.reduce(0) { $0 + $1.count }

        var cpu = storage.cpuSeconds()
        func cpuSince() -> Double {
            let now = storage.cpuSeconds()
            defer { cpu = now }
            return now - cpu
        }
        var uploadTime = Duration.zero
        for (owner, ownRows) in zip(owners, rows) {
            let batches = stride(from: 0, to: ownRows.count, by: batch).map {
                Array(ownRows[$0..<min($0 + batch, ownRows.count)])
            }
            uploadTime += try await storage.insert(batches, owner: owner)
        }
        let uploadCPU = cpuSince()

        let downloadStart = ContinuousClock.now
        var read = 0
        var bytes = 0
        for owner in owners {
            let pages = try await storage.readPages(owner: owner, zoneName: zoneName, page: page)
            read += pages.rows
            bytes += pages.bytes
        }
        let downloadTime = ContinuousClock.now - downloadStart
        guard read == count, bytes > 0 else {
            throw ReferenceError(description: "the \(storage.name) reference read \(read) rows back of \(count)")
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
