import Foundation
import GRDB
import SyncCore

/// Storage usage, quotas, and the removal of deleted zones' records, on SQLite.
///
/// Each zone row and each account row holds the bytes of its live records' fields (`used_bytes`);
/// ``upsert(_:owner:storedBytes:_:)`` moves both in the transaction that writes the rows, and deleting a zone
/// takes the zone's bytes off the account's at once.
extension SQLiteRecordStore {
    /// The schema of migration v9, and the usage of what was stored before it.
    static let quotaMigration = """
        ALTER TABLE account ADD COLUMN used_bytes INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE account ADD COLUMN quota_bytes INTEGER;
        ALTER TABLE zone ADD COLUMN used_bytes INTEGER NOT NULL DEFAULT 0;
        UPDATE zone SET used_bytes = COALESCE((SELECT SUM(length(CAST(fields AS BLOB))) FROM record
            WHERE record.owner = zone.owner AND record.zone_name = zone.zone_name), 0)
        WHERE deleted = 0;
        UPDATE account SET used_bytes = COALESCE((SELECT SUM(used_bytes) FROM zone
            WHERE zone.owner = account.user_record_name AND deleted = 0), 0);
        """

    public func storageUsage(owner: String) async throws -> StorageUsage {
        try await pool.read { db in try Self.storageUsage(db, owner: owner, defaultQuotaBytes: self.defaultQuotaBytes) }
    }

    public func accountStorage(username: String?) async throws -> [AccountStorage] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT user_record_name, username, used_bytes, quota_bytes FROM account
                    WHERE ? IS NULL OR username = ? ORDER BY username
                    """, arguments: [username, username]
            ).map(Self.accountStorage(from:))
        }
    }

    public func setQuota(username: String, _ quota: AccountQuota) async throws -> AccountStorage? {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE account SET quota_bytes = ? WHERE username = ?", arguments: [quota.stored, username])
            return try Row.fetchOne(
                db, sql: "SELECT user_record_name, username, used_bytes, quota_bytes FROM account WHERE username = ?",
                arguments: [username]
            ).map(Self.accountStorage(from:))
        }
    }

    public func purgeDeletedZones(owner: String?, zoneNames: [String]?) async throws -> Int {
        // Deleted zones that still have rows (compaction removes a zone's tombstone only after this).
        let zones = try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT owner, zone_name FROM zone
                    WHERE deleted = 1 AND (? IS NULL OR owner = ?) AND EXISTS (
                        SELECT 1 FROM record WHERE record.owner = zone.owner AND record.zone_name = zone.zone_name)
                    """, arguments: [owner, owner]
            ).map { (owner: $0["owner"] as String, zoneName: $0["zone_name"] as String) }
        }.filter { zone in zoneNames.map { $0.contains(zone.zoneName) } ?? true }
        var removed = 0
        for zone in zones {
            while true {
                // One chunk per transaction: the writer is free between them.
                let chunk = try await pool.write { db in
                    try Self.purgeChunk(db, owner: zone.owner, zoneName: zone.zoneName, limit: deletedZonePurgeChunk)
                }
                removed += chunk
                if chunk < deletedZonePurgeChunk { break }
            }
        }
        return removed
    }

    /// Removes up to `limit` rows of a zone that is not live; none of a live one (it may have been
    /// made again since the caller looked). Returns how many it removed.
    static func purgeChunk(_ db: Database, owner: String, zoneName: String, limit: Int?) throws -> Int {
        if try zoneIsLive(db, owner: owner, zoneName: zoneName) { return 0 }
        try db.execute(
            sql: """
                DELETE FROM record WHERE rowid IN (
                    SELECT rowid FROM record WHERE owner = ? AND zone_name = ? LIMIT ?)
                """, arguments: [owner, zoneName, limit ?? -1])
        return db.changesCount
    }

    /// The account's usage and limit, read in `db`.
    static func storageUsage(_ db: Database, owner: String, defaultQuotaBytes: Int64?) throws -> StorageUsage {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT used_bytes, quota_bytes FROM account WHERE user_record_name = ?", arguments: [owner])
        else {
            throw SyncError.accountGone
        }
        return StorageUsage(
            usedBytes: row["used_bytes"],
            limitBytes: AccountQuota(stored: row["quota_bytes"]).limit(defaultBytes: defaultQuotaBytes))
    }

    /// Counts the rows about to be written in place of what they replace, in each zone's and the
    /// owner's usage; called by ``upsert(_:owner:storedBytes:_:)`` before it writes them. What
    /// `storedBytes` does not give is read.
    static func countUsage(of rows: [StoredRecord], owner: String, storedBytes: [RecordKey: Int64], _ db: Database)
        throws
    {
        let lengths = try db.cachedStatement(
            sql: """
                SELECT record_name, length(fields) FROM record
                WHERE owner = ? AND zone_name = ? AND record_name IN (SELECT value FROM json_each(?))
                """)
        var total: Int64 = 0
        for (zoneName, zoneRows) in Dictionary(grouping: rows, by: \.key.zoneName) {
            var replaced: [String: Int64] = [:]
            let unknown = zoneRows.filter { storedBytes[$0.key] == nil }
            for row in zoneRows { replaced[row.key.recordName] = storedBytes[row.key] }
            if !unknown.isEmpty {
                let found = try Row.fetchCursor(
                    lengths, arguments: [owner, zoneName, jsonList(unknown, \.key.recordName)])
                while let row = try found.next() { replaced[row[0]] = row[1] }
            }
            var delta: Int64 = 0
            for row in zoneRows {
                // A row written twice replaces its own first version.
                delta += Int64(row.fields.count) - (replaced[row.key.recordName] ?? 0)
                replaced[row.key.recordName] = Int64(row.fields.count)
            }
            guard delta != 0 else { continue }
            try db.execute(
                sql: "UPDATE zone SET used_bytes = used_bytes + ? WHERE owner = ? AND zone_name = ?",
                arguments: [delta, owner, zoneName])
            total += delta
        }
        if total != 0 {
            try db.execute(
                sql: "UPDATE account SET used_bytes = used_bytes + ? WHERE user_record_name = ?",
                arguments: [total, owner])
        }
    }

    /// Takes a zone's usage off its owner's, as the zone is deleted.
    static func uncountZone(_ db: Database, owner: String, zoneName: String) throws {
        try db.execute(
            sql: """
                UPDATE account SET used_bytes = used_bytes - COALESCE(
                    (SELECT used_bytes FROM zone WHERE owner = ? AND zone_name = ?), 0)
                WHERE user_record_name = ?
                """, arguments: [owner, zoneName, owner])
        try db.execute(
            sql: "UPDATE zone SET used_bytes = 0 WHERE owner = ? AND zone_name = ?", arguments: [owner, zoneName])
    }

    private static func accountStorage(from row: Row) -> AccountStorage {
        AccountStorage(
            userRecordName: row["user_record_name"], username: row["username"], usedBytes: row["used_bytes"],
            quota: AccountQuota(stored: row["quota_bytes"]))
    }
}
