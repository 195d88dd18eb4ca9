import Foundation
import GRDB
import SyncCore

/// Record hierarchies' reads and writes in SQLite's SQL: each record's parent and shared root are
/// columns, and `share_membership` logs the records that joined or left a shared hierarchy without
/// being saved themselves (``MembershipChange``).
extension SQLiteTransaction {
    func chain(owner: String, from key: RecordKey) throws -> [(name: String, node: RecordHierarchy.Node)] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    WITH RECURSIVE up(name, type, parent, share_name, share_root, depth) AS (
                        SELECT record_name, record_type, parent_name, share_name, share_root, 0 FROM record
                        WHERE owner = ?1 AND zone_name = ?2 AND record_name = ?3 AND deleted = 0
                        UNION ALL
                        SELECT r.record_name, r.record_type, r.parent_name, r.share_name, r.share_root, up.depth + 1
                        FROM record r JOIN up ON r.record_name = up.parent
                        WHERE r.owner = ?1 AND r.zone_name = ?2 AND r.deleted = 0 AND up.depth < \(RecordHierarchy.maximumDepth)
                    )
                    SELECT name, type, parent, share_name, share_root FROM up ORDER BY depth
                    """), arguments: [owner, key.zoneName, key.recordName]
        ).map {
            (
                $0["name"],
                RecordHierarchy.Node(
                    recordType: $0["type"], parentName: $0["parent"], shareName: $0["share_name"],
                    shareRoot: $0["share_root"])
            )
        }
    }

    func adopts(owner: String, _ key: RecordKey) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT NOT EXISTS (SELECT 1 FROM record WHERE owner = ?1 AND zone_name = ?2 AND record_name = ?3 AND deleted = 0)
                        AND EXISTS (SELECT 1 FROM record WHERE owner = ?1 AND zone_name = ?2 AND parent_name = ?3 AND deleted = 0)
                    """), arguments: [owner, key.zoneName, key.recordName]) == true
    }

    func hasShareBelow(owner: String, _ key: RecordKey) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    WITH RECURSIVE down(name) AS (
                        SELECT record_name FROM record
                        WHERE owner = ?1 AND zone_name = ?2 AND parent_name = ?3 AND deleted = 0
                        UNION
                        SELECT r.record_name FROM record r JOIN down ON r.parent_name = down.name
                        WHERE r.owner = ?1 AND r.zone_name = ?2 AND r.deleted = 0
                    )
                    SELECT EXISTS (
                        SELECT 1 FROM down JOIN record r ON r.owner = ?1 AND r.zone_name = ?2 AND r.record_name = down.name
                        WHERE r.share_name IS NOT NULL)
                    """), arguments: [owner, key.zoneName, key.recordName]) == true
    }

    /// (The recursion ends: a name is visited once.)
    func descendants(owner: String, of key: RecordKey) throws -> [RecordHierarchy.Descendant] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    WITH RECURSIVE down(name) AS (
                        SELECT record_name FROM record
                        WHERE owner = ?1 AND zone_name = ?2 AND parent_name = ?3 AND deleted = 0 AND share_name IS NULL
                        UNION
                        SELECT r.record_name FROM record r JOIN down ON r.parent_name = down.name
                        WHERE r.owner = ?1 AND r.zone_name = ?2 AND r.deleted = 0 AND r.share_name IS NULL
                    )
                    SELECT r.record_name, r.record_type, r.share_root
                    FROM down JOIN record r ON r.owner = ?1 AND r.zone_name = ?2 AND r.record_name = down.name
                    """), arguments: [owner, key.zoneName, key.recordName]
        ).map { RecordHierarchy.Descendant(name: $0["record_name"], type: $0["record_type"], root: $0["share_root"]) }
    }

    func recordType(owner: String, _ key: RecordKey) throws -> String? {
        try String.fetchOne(
            db, sql: "SELECT record_type FROM record WHERE owner = ? AND zone_name = ? AND record_name = ?",
            arguments: [owner, key.zoneName, key.recordName])
    }

    func setShareRoot(_ root: String?, owner: String, zoneName: String, recordNames: [String]) throws {
        let move = try db.cachedStatement(
            sql: "UPDATE record SET share_root = ? WHERE owner = ? AND zone_name = ? AND record_name = ?")
        for name in recordNames {
            try move.execute(arguments: [root, owner, zoneName, name])
        }
    }

    func logMembershipChanges(_ changes: [MembershipChange], owner: String, zoneName: String, at: Int64) throws {
        let log = try db.cachedStatement(
            sql: """
                INSERT INTO share_membership (owner, zone_name, seq, record_name, record_type, old_root, new_root, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
        for change in changes {
            try log.execute(arguments: [
                owner, zoneName, change.seq, change.recordName, change.recordType, change.oldRoot, change.newRoot, at,
            ])
        }
    }

    func deleteMembershipChanges(owner: String, zoneName: String) throws {
        try db.execute(
            sql: "DELETE FROM share_membership WHERE owner = ? AND zone_name = ?", arguments: [owner, zoneName])
    }
}
