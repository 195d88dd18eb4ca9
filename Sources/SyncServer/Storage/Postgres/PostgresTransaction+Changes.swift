import Foundation
import Logging
import PostgresNIO
import SyncCore

/// What changed, in PostgreSQL's SQL: an account's zones, a zone's records, and the membership
/// changes participants read beside them. Each read that stands alone is one statement, which is one
/// snapshot by itself: a fetch is one round trip and needs no transaction
/// (``RecordStoreBackend/readStatement(_:)``).
extension PostgresTransaction {
    func liveZones(owner: String) async throws -> [StoredZone] {
        try await query(
            """
            SELECT zone_name, key_version, wrapped_key FROM zone
            WHERE owner = \(owner) AND NOT deleted ORDER BY zone_name COLLATE "C"
            """
        ).decode((String, Int64?, Data?).self).map { StoredZone(zoneName: $0, keyVersion: $1, wrappedKey: $2) }
    }

    func databaseChanges(owner: String, since: ChangeCursor?, limit: Int) async throws -> DatabaseChangePage {
        let rows = try await query(
            """
            SELECT a.change_seq, a.compacted_seq, z.zone_name, z.deleted, z.deletion_reason, z.change_seq
            FROM account a LEFT JOIN LATERAL (
                SELECT zone_name, deleted, deletion_reason, change_seq FROM zone
                WHERE owner = a.user_record_name AND change_seq > \(since?.seq ?? 0) ORDER BY change_seq
                LIMIT \(limit + 1)
            ) z ON true
            WHERE a.user_record_name = \(owner)
            ORDER BY z.change_seq
            """
        ).decode((Int64, Int64, String?, Bool?, String?, Int64?).self)
        guard let (currentSeq, compactedSeq, _, _, _, _) = rows.first else { throw SyncError.accountGone }
        try since?.checkCurrent(compactedSeq: compactedSeq, currentSeq: currentSeq)
        let zones = rows.compactMap { _, _, name, deleted, reason, seq in
            name.map {
                DatabaseChangePage.Row(zoneName: $0, isDeleted: deleted ?? false, deletionReason: reason, seq: seq ?? 0)
            }
        }
        return DatabaseChangePage(rows: zones, limit: limit, owner: owner, currentSeq: currentSeq)
    }

    /// The account's counters, the zone's incarnation and a page of its rows, in one statement.
    func zoneChanges(
        owner: String, zoneName: String, since: ChangeCursor?, limit: Int, excludingWriter: String?
    ) async throws -> ZoneChangePage {
        // "" (rows no writer saved) leaves nothing out.
        let excluded = excludingWriter ?? ""
        var head: (currentSeq: Int64, compactedSeq: Int64, incarnation: String?)?
        var records: [StoredRecord] = []
        for try await row in try await connection.query(
            """
            SELECT a.change_seq, a.compacted_seq, z.incarnation, r.*
            FROM account a
            LEFT JOIN zone z ON z.owner = a.user_record_name AND z.zone_name = \(zoneName) AND NOT z.deleted
            LEFT JOIN LATERAL (
                SELECT \(unescaped: StoredRecord.columns) FROM record
                WHERE z.incarnation IS NOT NULL AND owner = a.user_record_name AND zone_name = \(zoneName)
                    AND seq > \(since?.seq ?? 0) AND (deleted OR \(excluded) = '' OR writer <> \(excluded))
                ORDER BY seq LIMIT \(limit + 1)
            ) r ON true
            WHERE a.user_record_name = \(owner)
            ORDER BY r.seq
            """, logger: logger
        ) {
            let cells = row.makeRandomAccess()
            if head == nil {
                head = try (cells[0].decode(Int64.self), cells[1].decode(Int64.self), cells[2].decode(String?.self))
            }
            if let record = try StoredRecord(cells, from: 3) { records.append(record) }
        }
        guard let head else { throw SyncError.accountGone }
        guard let incarnation = head.incarnation else {
            throw SyncError(.zoneNotFound, "zone '\(zoneName)' does not exist")
        }
        try since?.checkCurrent(
            compactedSeq: head.compactedSeq, currentSeq: head.currentSeq, incarnation: incarnation)
        return ZoneChangePage(
            rows: records, limit: limit, owner: owner, zoneName: zoneName, incarnation: incarnation,
            currentSeq: head.currentSeq)
    }

    func membershipChanges(owner: String, zoneName: String, after seq: Int64, limit: Int) async throws
        -> [MembershipChange]
    {
        try await query(
            """
            SELECT seq, record_name, record_type, old_root, new_root FROM share_membership
            WHERE owner = \(owner) AND zone_name = \(zoneName) AND seq > \(seq) ORDER BY seq LIMIT \(limit + 1)
            """
        ).decode((Int64, String, String, String?, String?).self).map { seq, name, type, old, new in
            MembershipChange(recordName: name, recordType: type, oldRoot: old, newRoot: new, seq: seq)
        }
    }
}
