import Foundation
import SyncCore
import SyncServer

/// Storage used bare, as `sync-bench server`'s reference: the rows the server stores for the same records,
/// written with the server's own statement into the server's schema, and read back in change order. No HTTP,
/// no JSON, no checks: what the storage itself allows on this machine for the same rows.
protocol BareStorage: Sendable {
    /// The storage's name in the figures: `SQLite`, `PostgreSQL`.
    var name: String { get }

    /// Whether several accounts' rows go in (and come back) at once, as the server's clients send them: true
    /// where the storage takes writers side by side (PostgreSQL, a connection each), false where it takes one
    /// at a time anyway (SQLite).
    var takesAccountsAtOnce: Bool { get }

    /// Inserts each batch in a transaction of its own with the server's own statement, as each request's rows
    /// are; the time it took.
    func insert(_ batches: [[StoredRecord]], owner: String) async throws -> Duration

    /// Reads `owner`'s rows of `zoneName` back in change order, `page` at a time, each page a read of its own,
    /// as a zone's changes are fetched; the rows and the fields' bytes read.
    func readPages(owner: String, zoneName: String, page: Int) async throws -> (rows: Int, bytes: Int)

    /// Whether the storage's work is done by PostgreSQL's processes as well as this one (``CPUReading``).
    var runsOnPostgres: Bool { get }
}

/// The figures of a ``BareStorage`` on the records of a `sync-bench server` run.
enum BareStorageReference {
    struct Figures {
        var upload: Double
        var download: Double
        /// The CPU seconds spent each way: this process's, and PostgreSQL's where it does the work.
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

    /// Every account's rows inserted into `storage` in batches of `batch`, then read back `page` at a time: the
    /// accounts one after the other, or all at once where the storage takes them so
    /// (``BareStorage/takesAccountsAtOnce``).
    /// - Parameter accounts: each account's records.
    static func measure(_ accounts: [[RecordValue]], batch: Int, page: Int, in storage: some BareStorage)
        async throws -> Figures
    {
        let owners = accounts.map { _ in "_" + UUID().uuidString.lowercased() }
        let zoneName = accounts.first?.first?.recordID.zoneID.zoneName ?? ""
        let rows = zip(owners, accounts).map { owner, records in Self.rows(records, owner: owner) }
        let count = rows.reduce(0) { $0 + $1.count }

        // This process's CPU, and PostgreSQL's where it does the work.
        var cpu = CPUReading(servers: [], countsPostgres: storage.runsOnPostgres)
        func cpuSince() -> Double {
            let spent = cpu.next()
            return spent.clients + spent.postgres
        }
        let batches = rows.map { ownRows in
            stride(from: 0, to: ownRows.count, by: batch).map { Array(ownRows[$0..<min($0 + batch, ownRows.count)]) }
        }
        let uploadStart = ContinuousClock.now
        try await everyAccount(of: owners, in: storage) { index, owner in
            _ = try await storage.insert(batches[index], owner: owner)
            return (0, 0)
        }
        let uploadTime = ContinuousClock.now - uploadStart
        let uploadCPU = cpuSince()

        let downloadStart = ContinuousClock.now
        let (read, bytes) = try await everyAccount(of: owners, in: storage) { _, owner in
            try await storage.readPages(owner: owner, zoneName: zoneName, page: page)
        }
        let downloadTime = ContinuousClock.now - downloadStart
        guard read == count, bytes > 0 else {
            throw BenchError(description: "the \(storage.name) reference read \(read) rows back of \(count)")
        }
        return Figures(
            upload: Double(count) / uploadTime.inSeconds, download: Double(count) / downloadTime.inSeconds,
            uploadCPU: uploadCPU, downloadCPU: cpuSince())
    }
}

extension BareStorageReference {
    /// `work` for each account, one after the other or all at once (``BareStorage/takesAccountsAtOnce``); the
    /// sums of what it counted.
    @discardableResult
    private static func everyAccount(
        of owners: [String], in storage: some BareStorage,
        _ work: @escaping @Sendable (Int, String) async throws -> (rows: Int, bytes: Int)
    ) async throws -> (rows: Int, bytes: Int) {
        guard storage.takesAccountsAtOnce else {
            var total = (rows: 0, bytes: 0)
            for (index, owner) in owners.enumerated() {
                let counted = try await work(index, owner)
                total = (total.rows + counted.rows, total.bytes + counted.bytes)
            }
            return total
        }
        return try await withThrowingTaskGroup(of: (rows: Int, bytes: Int).self) { group in
            for (index, owner) in owners.enumerated() { group.addTask { try await work(index, owner) } }
            return try await group.reduce(into: (rows: 0, bytes: 0)) { total, counted in
                total = (total.rows + counted.rows, total.bytes + counted.bytes)
            }
        }
    }
}
