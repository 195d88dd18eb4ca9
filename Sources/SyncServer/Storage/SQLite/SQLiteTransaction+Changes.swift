import Foundation
import GRDB
import SyncCore

/// What changed, in SQLite's SQL: an account's zones, a zone's records, and the membership changes
/// participants read beside them.
extension SQLiteTransaction {
    func liveZones(owner: String) throws -> [StoredZone] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT zone_name, key_version, wrapped_key FROM zone
                WHERE owner = ? AND deleted = 0 ORDER BY zone_name
                """, arguments: [owner]
        ).map(Self.zone(from:))
    }

    func databaseChanges(owner: String, since: ChangeCursor?, limit: Int) throws -> DatabaseChangePage {
        let (currentSeq, compactedSeq) = try lockAccount(owner: owner)
        try since?.checkCurrent(compactedSeq: compactedSeq, currentSeq: currentSeq)
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT zone_name, deleted, deletion_reason, change_seq FROM zone
                WHERE owner = ? AND change_seq > ? ORDER BY change_seq LIMIT ?
                """,
            arguments: [owner, since?.seq ?? 0, limit + 1])
        return DatabaseChangePage(
            rows: rows.map {
                DatabaseChangePage.Row(
                    zoneName: $0["zone_name"], isDeleted: $0["deleted"], deletionReason: $0["deletion_reason"],
                    seq: $0["change_seq"])
            }, limit: limit, owner: owner, currentSeq: currentSeq)
    }

    func zoneChanges(
        owner: String, zoneName: String, since: ChangeCursor?, limit: Int, excludingWriter: String?
    ) throws -> ZoneChangePage {
        guard
            let zone = try Row.fetchOne(
                db, sql: "SELECT incarnation FROM zone WHERE owner = ? AND zone_name = ? AND deleted = 0",
                arguments: [owner, zoneName])
        else {
            throw SyncError(.zoneNotFound, "zone '\(zoneName)' does not exist")
        }
        let incarnation: String = zone["incarnation"]
        let (currentSeq, compactedSeq) = try lockAccount(owner: owner)
        try since?.checkCurrent(compactedSeq: compactedSeq, currentSeq: currentSeq, incarnation: incarnation)
        let statement = try db.cachedStatement(
            sql: """
                SELECT \(StoredRecord.columns) FROM record WHERE owner = ? AND zone_name = ? AND seq > ?
                    AND (deleted = 1 OR ? = '' OR writer <> ?)
                ORDER BY seq LIMIT ?
                """)
        // "" (rows no writer saved) leaves nothing out.
        let excluded = excludingWriter ?? ""
        // Each record is read from the statement's row as it steps: copying the rows first cost more
        // than reading them.
        let rows = try Row.fetchCursor(
            statement, arguments: [owner, zoneName, since?.seq ?? 0, excluded, excluded, limit + 1])
        var records: [StoredRecord] = []
        records.reserveCapacity(limit + 1)
        while let row = try rows.next() { records.append(Self.record(from: row)) }
        return ZoneChangePage(
            rows: records, limit: limit, owner: owner, zoneName: zoneName,
            incarnation: incarnation, currentSeq: currentSeq)
    }

    func membershipChanges(owner: String, zoneName: String, after seq: Int64, limit: Int) throws
        -> [MembershipChange]
    {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT seq, record_name, record_type, old_root, new_root FROM share_membership
                    WHERE owner = ? AND zone_name = ? AND seq > ? ORDER BY seq LIMIT ?
                    """), arguments: [owner, zoneName, seq, limit + 1]
        ).map {
            MembershipChange(
                recordName: $0["record_name"], recordType: $0["record_type"], oldRoot: $0["old_root"],
                newRoot: $0["new_root"], seq: $0["seq"])
        }
    }
}
