import Foundation
import Logging
import PostgresNIO
import SyncCore

/// The shared steps' reads and writes (``StoreTransaction``) in PostgreSQL's SQL, on one connection
/// inside one transaction. Writers of one account queue on its row (``lockAccount(owner:)``), so
/// several instances writing at once keep its change numbers and usage exact.
struct PostgresTransaction: StoreTransaction {
    let connection: PostgresConnection
    let logger: Logger

    /// Runs one statement; its rows, read before the next.
    @discardableResult
    func query(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await connection.query(query, logger: logger).collect()
    }

    // MARK: The account's counters

    func lockAccount(owner: String) async throws -> (current: Int64, compacted: Int64) {
        for (current, compacted) in try await query(
            "SELECT change_seq, compacted_seq FROM account WHERE user_record_name = \(owner) FOR UPDATE"
        ).decode((Int64, Int64).self) {
            return (current, compacted)
        }
        throw SyncError.accountGone
    }

    func setChangeSeq(owner: String, seq: Int64) async throws {
        try await query("UPDATE account SET change_seq = \(seq) WHERE user_record_name = \(owner)")
    }

    func deleteEncryptionSettings(owner: String) async throws {
        try await query("DELETE FROM encryption_settings WHERE user_record_name = \(owner)")
    }

    func usage(owner: String) async throws -> (usedBytes: Int64, quotaBytes: Int64?) {
        for (used, quota) in try await query(
            "SELECT used_bytes, quota_bytes FROM account WHERE user_record_name = \(owner)"
        ).decode((Int64, Int64?).self) {
            return (used, quota)
        }
        throw SyncError.accountGone
    }

    // MARK: Zones

    func zoneIsLive(owner: String, zoneName: String) async throws -> Bool {
        try await !query("SELECT 1 FROM zone WHERE owner = \(owner) AND zone_name = \(zoneName) AND NOT deleted")
            .isEmpty
    }

    func liveZone(owner: String, zoneName: String) async throws -> StoredZone? {
        for (version, wrapped) in try await query(
            """
            SELECT key_version, wrapped_key FROM zone
            WHERE owner = \(owner) AND zone_name = \(zoneName) AND NOT deleted
            """
        ).decode((Int64?, Data?).self) {
            return StoredZone(zoneName: zoneName, keyVersion: version, wrappedKey: wrapped)
        }
        return nil
    }

    func encryptedZoneNames(owner: String) async throws -> [String] {
        try await query(
            """
            SELECT zone_name FROM zone WHERE owner = \(owner) AND NOT deleted AND wrapped_key IS NOT NULL
            ORDER BY zone_name COLLATE "C"
            """
        ).decode(String.self)
    }

    func setZoneKey(owner: String, zoneName: String, key: RecordZone.EncryptionKey, seq: Int64, at: Int64)
        async throws
    {
        try await query(
            """
            UPDATE zone SET key_version = \(Int64(key.keyVersion)), wrapped_key = \(key.wrappedKey),
                change_seq = \(seq), modified_at = \(at)
            WHERE owner = \(owner) AND zone_name = \(zoneName)
            """)
    }

    func createZone(owner: String, zone: StoredZone, incarnation: String, seq: Int64, at: Int64) async throws {
        let version = zone.encryptionKey.map { Int64($0.keyVersion) }
        try await query(
            """
            INSERT INTO zone (owner, zone_name, incarnation, change_seq, deleted, deletion_reason,
                modified_at, key_version, wrapped_key)
            VALUES (\(owner), \(zone.zoneName), \(incarnation), \(seq), FALSE, NULL, \(at), \(version),
                \(zone.encryptionKey?.wrappedKey))
            ON CONFLICT (owner, zone_name) DO UPDATE SET
                incarnation = EXCLUDED.incarnation, change_seq = EXCLUDED.change_seq, deleted = FALSE,
                deletion_reason = NULL, modified_at = EXCLUDED.modified_at,
                key_version = EXCLUDED.key_version, wrapped_key = EXCLUDED.wrapped_key, used_bytes = 0
            """)
    }

    func markZoneDeleted(owner: String, zoneName: String, reason: ZoneDeletionReason, seq: Int64, at: Int64)
        async throws
    {
        try await query(
            """
            UPDATE zone SET deleted = TRUE, deletion_reason = \(reason.rawValue), change_seq = \(seq),
                modified_at = \(at), key_version = NULL, wrapped_key = NULL
            WHERE owner = \(owner) AND zone_name = \(zoneName)
            """)
    }

    func setZoneChangeSeq(owner: String, zoneName: String, seq: Int64, at: Int64) async throws {
        try await query(
            """
            UPDATE zone SET change_seq = \(seq), modified_at = \(at)
            WHERE owner = \(owner) AND zone_name = \(zoneName)
            """)
    }

    func deletedZonesWithRecords(owner: String?) async throws -> [(owner: String, zoneName: String)] {
        try await query(
            """
            SELECT owner, zone_name FROM zone z
            WHERE deleted AND (\(owner)::text IS NULL OR owner = \(owner))
                AND EXISTS (SELECT 1 FROM record r WHERE r.owner = z.owner AND r.zone_name = z.zone_name)
            """
        ).decode((String, String).self).map { (owner: $0.0, zoneName: $0.1) }
    }

    func deleteRecordRows(owner: String, zoneName: String, fromSeq: Int64, limit: Int?) async throws -> (
        count: Int, lastSeq: Int64
    ) {
        // One row back, not one per row removed.
        for (count, last) in try await query(
            """
            WITH chunk AS (
                SELECT ctid FROM record WHERE owner = \(owner) AND zone_name = \(zoneName) AND seq >= \(fromSeq)
                ORDER BY seq LIMIT \(limit)),
            gone AS (DELETE FROM record r USING chunk WHERE r.ctid = chunk.ctid RETURNING r.seq)
            SELECT COUNT(*)::bigint, COALESCE(MAX(seq), \(fromSeq))::bigint FROM gone
            """
        ).decode((Int64, Int64).self) {
            return (Int(count), last)
        }
        return (0, fromSeq)
    }

    // MARK: Usage

    func storedSizes(owner: String, keys: [RecordKey]) async throws -> [RecordKey: Int64] {
        var sizes: [RecordKey: Int64] = [:]
        for (zoneName, recordName, size) in try await query(
            """
            SELECT r.zone_name, r.record_name, octet_length(r.fields)::bigint FROM record r
            JOIN unnest(\(keys.map(\.zoneName))::text[], \(keys.map(\.recordName))::text[]) AS u(z, n)
                ON r.zone_name = u.z AND r.record_name = u.n
            WHERE r.owner = \(owner)
            """
        ).decode((String, String, Int64).self) {
            sizes[RecordKey(zoneName: zoneName, recordName: recordName)] = size
        }
        return sizes
    }

    func addUsage(owner: String, zoneName: String, bytes: Int64) async throws {
        try await query(
            "UPDATE zone SET used_bytes = used_bytes + \(bytes) WHERE owner = \(owner) AND zone_name = \(zoneName)")
    }

    func addUsage(owner: String, bytes: Int64) async throws {
        try await query("UPDATE account SET used_bytes = used_bytes + \(bytes) WHERE user_record_name = \(owner)")
    }

    func uncountZone(owner: String, zoneName: String) async throws {
        try await query(
            """
            UPDATE account SET used_bytes = used_bytes - COALESCE(
                (SELECT used_bytes FROM zone WHERE owner = \(owner) AND zone_name = \(zoneName)), 0)
            WHERE user_record_name = \(owner)
            """)
        try await query("UPDATE zone SET used_bytes = 0 WHERE owner = \(owner) AND zone_name = \(zoneName)")
    }

    // MARK: Records

    func storedRecords(owner: String, keys: [RecordKey]) async throws -> [RecordKey: StoredRecord] {
        var existing: [RecordKey: StoredRecord] = [:]
        for (zoneName, zoneKeys) in Dictionary(grouping: keys, by: \.zoneName) {
            for record in try await records(
                """
                SELECT \(unescaped: StoredRecord.columns) FROM record
                WHERE owner = \(owner) AND zone_name = \(zoneName) AND record_name = ANY(\(zoneKeys.map(\.recordName)))
                """)
            {
                existing[record.key] = record
            }
        }
        return existing
    }

    func storedRecord(owner: String, key: RecordKey, live: Bool) async throws -> StoredRecord? {
        try await records(
            """
            SELECT \(unescaped: StoredRecord.columns) FROM record
            WHERE owner = \(owner) AND zone_name = \(key.zoneName) AND record_name = \(key.recordName)
                AND (NOT deleted OR NOT \(live))
            """
        ).first
    }

    /// In one statement, a column per array. postgres-nio's arrays hold no NULL, so a missing name
    /// travels as "" (a name is never empty) and turns back into NULL here.
    func writeRecordRows(_ rows: [StoredRecord], owner: String) async throws {
        try await query(
            """
            INSERT INTO record (owner, zone_name, record_name, record_type, fields, change_tag, created_at, creator,
                modified_at, modifier, seq, deleted, writer, parent_name, share_name, share_root)
            SELECT \(owner), z, n, t, f, c, ca, cr, ma, mo, s, d, w, NULLIF(p, ''), NULLIF(sn, ''), NULLIF(sr, '')
            FROM unnest(\(rows.map(\.key.zoneName))::text[], \(rows.map(\.key.recordName))::text[],
                \(rows.map(\.recordType))::text[], \(rows.map { ByteBuffer(bytes: $0.fields) })::bytea[],
                \(rows.map(\.changeTag))::text[], \(rows.map(\.createdAt))::bigint[], \(rows.map(\.creator))::text[],
                \(rows.map(\.modifiedAt))::bigint[], \(rows.map(\.modifier))::text[], \(rows.map(\.seq))::bigint[],
                \(rows.map(\.isDeleted))::boolean[], \(rows.map(\.writer))::text[],
                \(rows.map { $0.parentName ?? "" })::text[], \(rows.map { $0.shareName ?? "" })::text[],
                \(rows.map { $0.shareRoot ?? "" })::text[]) AS u(z, n, t, f, c, ca, cr, ma, mo, s, d, w, p, sn, sr)
            ON CONFLICT (owner, zone_name, record_name) DO UPDATE SET
                record_type = EXCLUDED.record_type, fields = EXCLUDED.fields, change_tag = EXCLUDED.change_tag,
                created_at = EXCLUDED.created_at, creator = EXCLUDED.creator, modified_at = EXCLUDED.modified_at,
                modifier = EXCLUDED.modifier, seq = EXCLUDED.seq, deleted = EXCLUDED.deleted, writer = EXCLUDED.writer,
                parent_name = EXCLUDED.parent_name, share_name = EXCLUDED.share_name, share_root = EXCLUDED.share_root
            """)
    }

    func requestAnswer(owner: String, requestID: String) async throws -> (bodyHash: Data, response: Data)? {
        for (hash, response) in try await query(
            "SELECT body_hash, response FROM client_request WHERE owner = \(owner) AND request_id = \(requestID)"
        ).decode((Data, Data).self) {
            return (hash, response)
        }
        return nil
    }

    func saveRequestAnswer(owner: String, requestID: String, bodyHash: Data, response: Data, at: Int64)
        async throws
    {
        try await query(
            """
            INSERT INTO client_request (owner, request_id, body_hash, response, created_at)
            VALUES (\(owner), \(requestID), \(bodyHash), \(response), \(at))
            """)
    }

    // MARK: Assets

    func asset(id: String, forUpdate: Bool) async throws -> StoredAsset? {
        try await assets(
            forUpdate
                ? "SELECT \(unescaped: Self.assetColumns) FROM asset WHERE id = \(id) FOR UPDATE"
                : "SELECT \(unescaped: Self.assetColumns) FROM asset WHERE id = \(id)"
        ).first
    }

    /// Locked for the modification that reads them (none for an empty list, without a query).
    func assets(ids: [String]) async throws -> [String: StoredAsset] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await assets(
            "SELECT \(unescaped: Self.assetColumns) FROM asset WHERE id = ANY(\(ids)) FOR UPDATE")
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0) })
    }

    func insertAsset(id: String, uploader: String, size: Int64, at: Int64) async throws {
        try await query(
            "INSERT INTO asset (id, uploader, size, created_at) VALUES (\(id), \(uploader), \(size), \(at))")
    }

    func attachAssets(_ ids: [String], to place: AssetPlace, at: Int64) async throws {
        try await query(
            """
            UPDATE asset SET detached_at = \(at)
            WHERE owner = \(place.owner) AND zone_name = \(place.key.zoneName) AND record_name = \(place.key.recordName)
                AND detached_at IS NULL AND NOT (id = ANY(\(ids)))
            """)
        try await query(
            """
            UPDATE asset SET owner = \(place.owner), zone_name = \(place.key.zoneName),
                record_name = \(place.key.recordName), detached_at = NULL
            WHERE id = ANY(\(ids))
            """)
    }

    // MARK: History

    func raiseCompactedSeqs(before cutoff: Int64) async throws {
        try await query(
            """
            UPDATE account SET compacted_seq = GREATEST(compacted_seq,
                COALESCE((SELECT MAX(seq) FROM record
                    WHERE owner = user_record_name AND deleted AND modified_at < \(cutoff)), 0),
                COALESCE((SELECT MAX(change_seq) FROM zone
                    WHERE owner = user_record_name AND deleted AND modified_at < \(cutoff)), 0),
                COALESCE((SELECT MAX(seq) FROM share_membership
                    WHERE owner = user_record_name AND created_at < \(cutoff)), 0))
            """)
    }

    func deleteMembershipChanges(before cutoff: Int64) async throws {
        try await query("DELETE FROM share_membership WHERE created_at < \(cutoff)")
    }

    func deleteTombstones(before cutoff: Int64) async throws -> Int {
        let records = try await query("DELETE FROM record WHERE deleted AND modified_at < \(cutoff) RETURNING 1")
        let zones = try await query("DELETE FROM zone WHERE deleted AND modified_at < \(cutoff) RETURNING 1")
        return records.count + zones.count
    }

    func deleteRequestAnswers(before cutoff: Int64) async throws {
        try await query("DELETE FROM client_request WHERE created_at < \(cutoff)")
    }

    // MARK: Rows

    private static let assetColumns =
        "id, uploader, size, received, created_at, owner, zone_name, record_name, detached_at"

    private func assets(_ statement: PostgresQuery) async throws -> [StoredAsset] {
        try await query(statement).decode(
            (String, String, Int64, Int64, Int64, String?, String?, String?, Int64?).self
        ).map { id, uploader, size, received, created, owner, zoneName, recordName, detached in
            StoredAsset(
                id: id, uploader: uploader, size: size, received: received,
                createdAt: Date(millisecondsSince1970: created),
                record: owner.map {
                    AssetPlace(owner: $0, key: RecordKey(zoneName: zoneName ?? "", recordName: recordName ?? ""))
                },
                detachedAt: detached.map(Date.init(millisecondsSince1970:)))
        }
    }

    func records(_ statement: PostgresQuery) async throws -> [StoredRecord] {
        try await query(statement).compactMap { try StoredRecord($0.makeRandomAccess(), from: 0) }
    }
}
