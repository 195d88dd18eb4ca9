import Foundation
import SyncCore

/// Storage usage and the removal of deleted zones' records, once for every backend.
///
/// Each zone row and each account row holds the bytes of its live records' fields (`used_bytes`);
/// ``StoreTransaction/upsert(_:owner:storedBytes:storedReferrers:)`` moves both in the transaction
/// that writes the rows, under the owner's lock (``StoreTransaction/lockAccount(owner:)``), so the
/// count stays exact with any number of writers; deleting a zone takes its bytes off the account's at
/// once.
extension RecordStoreBackend {
    public func storageUsage(owner: String) async throws -> StorageUsage {
        let defaultQuotaBytes = self.defaultQuotaBytes
        return try await read { try await $0.storageUsage(owner: owner, defaultQuotaBytes: defaultQuotaBytes) }
    }

    public func purgeDeletedZones(owner: String?, zoneNames: [String]?) async throws -> Int {
        // Deleted zones that still have rows (compaction removes a zone's tombstone only after this).
        let zones = try await read { try await $0.deletedZonesWithRecords(owner: owner) }
            .filter { zone in zoneNames.map { $0.contains(zone.zoneName) } ?? true }
        var removed = 0
        for zone in zones {
            // Each chunk starts where the last one ended, in change order: on PostgreSQL the index
            // entries of the rows already removed stay until vacuum, and starting from the zone's
            // first change each time would step over all of them again.
            var from: Int64 = 0
            while true {
                // One chunk per transaction, under the owner's lock: a zone made again under the same
                // name takes that lock too, so a chunk never meets the new zone's records; and other
                // writers go between chunks.
                let start = from
                let (count, last) = try await write { transaction in
                    _ = try await transaction.lockAccount(owner: zone.owner)
                    return try await transaction.purgeChunk(
                        owner: zone.owner, zoneName: zone.zoneName, fromSeq: start, limit: deletedZonePurgeChunk)
                }
                removed += count
                if count < deletedZonePurgeChunk { break }
                from = last
            }
        }
        return removed
    }
}

extension StoreTransaction {
    /// Removes up to `limit` rows (all for nil) of a zone that is not live, the first in change order
    /// from `fromSeq` on; none of a live one (it may have been made again since the caller looked).
    /// The caller holds the owner's lock. Returns how many it removed and the last one's change number
    /// (rows of one change may share it: the next chunk starts at it again, not after it).
    func purgeChunk(owner: String, zoneName: String, fromSeq: Int64 = 0, limit: Int?) async throws -> (
        count: Int, lastSeq: Int64
    ) {
        if try await zoneIsLive(owner: owner, zoneName: zoneName) { return (0, fromSeq) }
        return try await deleteRecordRows(owner: owner, zoneName: zoneName, fromSeq: fromSeq, limit: limit)
    }

    /// Writes record rows (new ones, new versions, tombstones) as they are, counts them in the zones'
    /// and the owner's usage, and indexes their deleteSelf references. `storedBytes` gives the size of
    /// what some of them replace, when the caller read it already under the same lock, and
    /// `storedReferrers` which of those may hold deleteSelf references (the others hold none).
    func upsert(
        _ rows: [StoredRecord], owner: String, storedBytes: [RecordKey: Int64] = [:],
        storedReferrers: Set<RecordKey> = []
    ) async throws {
        guard !rows.isEmpty else { return }
        try await countUsage(of: rows, owner: owner, storedBytes: storedBytes)
        try await writeRecordRows(rows, owner: owner)
        try await indexReferences(
            of: rows, owner: owner, storedBytes: storedBytes, storedReferrers: storedReferrers)
    }

    /// Counts the rows about to be written in place of what they replace, in each zone's and the
    /// owner's usage. What `storedBytes` does not give is read.
    private func countUsage(of rows: [StoredRecord], owner: String, storedBytes: [RecordKey: Int64]) async throws {
        var replaced = storedBytes
        let unknown = Set(rows.lazy.map(\.key).filter { storedBytes[$0] == nil })
        if !unknown.isEmpty {
            replaced.merge(try await storedSizes(owner: owner, keys: Array(unknown))) { known, _ in known }
        }
        var deltas: [String: Int64] = [:]
        for row in rows {
            let size = Int64(row.fields.count)
            deltas[row.key.zoneName, default: 0] += size - (replaced[row.key] ?? 0)
            // A row written twice replaces its own first version.
            replaced[row.key] = size
        }
        var total: Int64 = 0
        for (zoneName, delta) in deltas.sorted(by: { $0.key < $1.key }) where delta != 0 {
            try await addUsage(owner: owner, zoneName: zoneName, bytes: delta)
            total += delta
        }
        if total != 0 { try await addUsage(owner: owner, bytes: total) }
    }
}
