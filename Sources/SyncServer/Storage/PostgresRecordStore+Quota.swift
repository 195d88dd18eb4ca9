import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Storage usage, quotas, and the removal of deleted zones' records, on PostgreSQL.
///
/// Each zone row and each account row holds the bytes of its live records' fields (`used_bytes`);
/// ``upsert(_:owner:storedBytes:_:logger:)`` moves both in the transaction that writes the rows. Every writer of
/// an account holds its account row's lock (``lockAccount(_:owner:logger:)``), so the count stays
/// exact with any number of instances writing at once.
extension PostgresRecordStore {
    /// The statements of migration 6: the columns, and the usage of what was stored before it.
    static let quotaMigration = [
        "ALTER TABLE account ADD COLUMN used_bytes BIGINT NOT NULL DEFAULT 0, ADD COLUMN quota_bytes BIGINT",
        "ALTER TABLE zone ADD COLUMN used_bytes BIGINT NOT NULL DEFAULT 0",
        """
        UPDATE zone z SET used_bytes = s.bytes
        FROM (SELECT owner, zone_name, SUM(octet_length(fields)) AS bytes FROM record GROUP BY owner, zone_name) s
        WHERE z.owner = s.owner AND z.zone_name = s.zone_name AND NOT z.deleted
        """,
        """
        UPDATE account a SET used_bytes = s.bytes
        FROM (SELECT owner, SUM(used_bytes) AS bytes FROM zone WHERE NOT deleted GROUP BY owner) s
        WHERE a.user_record_name = s.owner
        """,
    ]

    public func storageUsage(owner: String) async throws -> StorageUsage {
        try await snapshot { connection in
            try await Self.storageUsage(
                connection, owner: owner, defaultQuotaBytes: self.defaultQuotaBytes, logger: self.logger)
        }
    }

    public func accountStorage(username: String?) async throws -> [AccountStorage] {
        let folded = username.map(Self.folded)
        var accounts: [AccountStorage] = []
        for (name, username, used, quota) in try await query(
            """
            SELECT user_record_name, username, used_bytes, quota_bytes FROM account
            WHERE \(folded)::text IS NULL OR username_folded = \(folded) ORDER BY username_folded COLLATE "C"
            """, logger: logger
        ).decode((String, String, Int64, Int64?).self) {
            accounts.append(
                AccountStorage(
                    userRecordName: name, username: username, usedBytes: used, quota: AccountQuota(stored: quota)))
        }
        return accounts
    }

    public func setQuota(username: String, _ quota: AccountQuota) async throws -> AccountStorage? {
        for (name, username, used, stored) in try await query(
            """
            UPDATE account SET quota_bytes = \(quota.stored) WHERE username_folded = \(Self.folded(username))
            RETURNING user_record_name, username, used_bytes, quota_bytes
            """, logger: logger
        ).decode((String, String, Int64, Int64?).self) {
            return AccountStorage(
                userRecordName: name, username: username, usedBytes: used, quota: AccountQuota(stored: stored))
        }
        return nil
    }

    public func purgeDeletedZones(owner: String?, zoneNames: [String]?) async throws -> Int {
        // Deleted zones that still have rows (compaction removes a zone's tombstone only after this).
        var zones: [(owner: String, zoneName: String)] = []
        for (zoneOwner, name) in try await query(
            """
            SELECT owner, zone_name FROM zone z
            WHERE deleted AND (\(owner)::text IS NULL OR owner = \(owner))
                AND (\(zoneNames)::text[] IS NULL OR zone_name = ANY(\(zoneNames)::text[]))
                AND EXISTS (SELECT 1 FROM record r WHERE r.owner = z.owner AND r.zone_name = z.zone_name)
            """, logger: logger
        ).decode((String, String).self) {
            zones.append((zoneOwner, name))
        }
        var removed = 0
        for zone in zones {
            // Each chunk starts where the last one ended, in change order: the index entries of the
            // rows already removed stay until vacuum, and starting from the zone's first change
            // each time would step over all of them again.
            var from: Int64 = 0
            while true {
                // One chunk per transaction, under the owner's lock: a zone made again under the same
                // name takes that lock too, so a chunk never meets the new zone's records.
                let start = from
                let (count, last) = try await transaction { connection in
                    _ = try await Self.lockAccount(connection, owner: zone.owner, logger: self.logger)
                    return try await Self.purgeChunk(
                        connection, owner: zone.owner, zoneName: zone.zoneName, fromSeq: start,
                        limit: deletedZonePurgeChunk, logger: self.logger)
                }
                removed += count
                if count < deletedZonePurgeChunk { break }
                from = last
            }
        }
        return removed
    }

    /// Removes up to `limit` rows (all for nil) of a zone that is not live, the first in change order
    /// from `fromSeq` on; none of a live one. The caller holds the owner's lock. Returns how many it
    /// removed and the last one's change number (rows of one change may share it: the next chunk
    /// starts at it again, not after it).
    static func purgeChunk(
        _ connection: PostgresConnection, owner: String, zoneName: String, fromSeq: Int64 = 0, limit: Int?,
        logger: Logger
    ) async throws -> (count: Int, lastSeq: Int64) {
        if try await zoneIsLive(connection, owner: owner, zoneName: zoneName, logger: logger) { return (0, fromSeq) }
        // One row back, not one per row removed.
        for try await (count, last) in try await connection.query(
            """
            WITH chunk AS (
                SELECT ctid FROM record WHERE owner = \(owner) AND zone_name = \(zoneName) AND seq >= \(fromSeq)
                ORDER BY seq LIMIT \(limit)),
            gone AS (DELETE FROM record r USING chunk WHERE r.ctid = chunk.ctid RETURNING r.seq)
            SELECT COUNT(*)::bigint, COALESCE(MAX(seq), \(fromSeq))::bigint FROM gone
            """, logger: logger
        ).decode((Int64, Int64).self) {
            return (Int(count), last)
        }
        return (0, fromSeq)
    }

    /// The account's usage and limit, read on `connection`.
    static func storageUsage(
        _ connection: PostgresConnection, owner: String, defaultQuotaBytes: Int64?, logger: Logger
    ) async throws -> StorageUsage {
        for try await (used, quota) in try await connection.query(
            "SELECT used_bytes, quota_bytes FROM account WHERE user_record_name = \(owner)", logger: logger
        ).decode((Int64, Int64?).self) {
            return StorageUsage(
                usedBytes: used, limitBytes: AccountQuota(stored: quota).limit(defaultBytes: defaultQuotaBytes))
        }
        throw SyncError.accountGone
    }

    /// Counts the rows about to be written in place of what they replace, in each zone's and the
    /// owner's usage; called by ``upsert(_:owner:storedBytes:_:logger:)`` before it writes them, under
    /// the owner's lock. What `storedBytes` does not give is read.
    static func countUsage(
        of rows: [StoredRecord], owner: String, storedBytes: [RecordKey: Int64], _ connection: PostgresConnection,
        logger: Logger
    ) async throws {
        var deltas: [String: Int64] = [:]
        var latest: [RecordKey: Int64] = [:]
        for row in rows {
            // A row written twice replaces its own first version.
            deltas[row.key.zoneName, default: 0] +=
                Int64(row.fields.count) - (latest[row.key] ?? storedBytes[row.key] ?? 0)
            latest[row.key] = Int64(row.fields.count)
        }
        let unknown = Set(rows.map(\.key)).filter { storedBytes[$0] == nil }
        if !unknown.isEmpty {
            for try await (zoneName, replaced) in try await connection.query(
                """
                SELECT r.zone_name, SUM(octet_length(r.fields))::bigint FROM record r
                JOIN unnest(\(unknown.map(\.zoneName))::text[], \(unknown.map(\.recordName))::text[]) AS u(z, n)
                    ON r.zone_name = u.z AND r.record_name = u.n
                WHERE r.owner = \(owner) GROUP BY r.zone_name
                """, logger: logger
            ).decode((String, Int64).self) {
                deltas[zoneName, default: 0] -= replaced
            }
        }
        var total: Int64 = 0
        for (zoneName, delta) in deltas where delta != 0 {
            try await connection.query(
                "UPDATE zone SET used_bytes = used_bytes + \(delta) WHERE owner = \(owner) AND zone_name = \(zoneName)",
                logger: logger)
            total += delta
        }
        if total != 0 {
            try await connection.query(
                "UPDATE account SET used_bytes = used_bytes + \(total) WHERE user_record_name = \(owner)",
                logger: logger)
        }
    }

    /// Takes a zone's usage off its owner's, as the zone is deleted.
    static func uncountZone(
        _ connection: PostgresConnection, owner: String, zoneName: String, logger: Logger
    ) async throws {
        try await connection.query(
            """
            UPDATE account SET used_bytes = used_bytes - COALESCE(
                (SELECT used_bytes FROM zone WHERE owner = \(owner) AND zone_name = \(zoneName)), 0)
            WHERE user_record_name = \(owner)
            """, logger: logger)
        try await connection.query(
            "UPDATE zone SET used_bytes = 0 WHERE owner = \(owner) AND zone_name = \(zoneName)", logger: logger)
    }
}
