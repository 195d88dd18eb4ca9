import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Record hierarchies' reads and writes in PostgreSQL's SQL: parent and shared root are columns, and
/// `share_membership` logs the records that joined or left a shared hierarchy without being saved
/// themselves.
extension PostgresTransaction {
    func chain(owner: String, from key: RecordKey) async throws -> [(name: String, node: RecordHierarchy.Node)] {
        try await query(
            """
            WITH RECURSIVE up(name, type, parent, share_name, share_root, depth) AS (
                SELECT record_name, record_type, parent_name, share_name, share_root, 0 FROM record
                WHERE owner = \(owner) AND zone_name = \(key.zoneName) AND record_name = \(key.recordName) AND NOT deleted
                UNION ALL
                SELECT r.record_name, r.record_type, r.parent_name, r.share_name, r.share_root, up.depth + 1
                FROM record r JOIN up ON r.record_name = up.parent
                WHERE r.owner = \(owner) AND r.zone_name = \(key.zoneName) AND NOT r.deleted
                    AND up.depth < \(RecordHierarchy.maximumDepth)
            )
            SELECT name, type, parent, share_name, share_root FROM up ORDER BY depth
            """
        ).decode((String, String, String?, String?, String?).self).map { name, type, parent, share, root in
            (name, RecordHierarchy.Node(recordType: type, parentName: parent, shareName: share, shareRoot: root))
        }
    }

    func adopts(owner: String, _ key: RecordKey) async throws -> Bool {
        try await query(
            """
            SELECT NOT EXISTS (SELECT 1 FROM record WHERE owner = \(owner) AND zone_name = \(key.zoneName)
                    AND record_name = \(key.recordName) AND NOT deleted)
                AND EXISTS (SELECT 1 FROM record WHERE owner = \(owner) AND zone_name = \(key.zoneName)
                    AND parent_name = \(key.recordName) AND NOT deleted)
            """
        ).decode(Bool.self).first ?? false
    }

    func hasShareBelow(owner: String, _ key: RecordKey) async throws -> Bool {
        try await !query(
            """
            WITH RECURSIVE down(name) AS (
                SELECT record_name FROM record
                WHERE owner = \(owner) AND zone_name = \(key.zoneName) AND parent_name = \(key.recordName) AND NOT deleted
                UNION
                SELECT r.record_name FROM record r JOIN down ON r.parent_name = down.name
                WHERE r.owner = \(owner) AND r.zone_name = \(key.zoneName) AND NOT r.deleted
            )
            SELECT 1 FROM down JOIN record r ON r.owner = \(owner) AND r.zone_name = \(key.zoneName)
                AND r.record_name = down.name
            WHERE r.share_name IS NOT NULL LIMIT 1
            """
        ).isEmpty
    }

    /// (The recursion ends: a name is visited once.)
    func descendants(owner: String, of key: RecordKey) async throws -> [RecordHierarchy.Descendant] {
        try await query(
            """
            WITH RECURSIVE down(name) AS (
                SELECT record_name FROM record
                WHERE owner = \(owner) AND zone_name = \(key.zoneName) AND parent_name = \(key.recordName)
                    AND NOT deleted AND share_name IS NULL
                UNION
                SELECT r.record_name FROM record r JOIN down ON r.parent_name = down.name
                WHERE r.owner = \(owner) AND r.zone_name = \(key.zoneName) AND NOT r.deleted AND r.share_name IS NULL
            )
            SELECT r.record_name, r.record_type, r.share_root
            FROM down JOIN record r ON r.owner = \(owner) AND r.zone_name = \(key.zoneName)
                AND r.record_name = down.name
            """
        ).decode((String, String, String?).self).map { RecordHierarchy.Descendant(name: $0, type: $1, root: $2) }
    }

    func recordType(owner: String, _ key: RecordKey) async throws -> String? {
        try await query(
            """
            SELECT record_type FROM record
            WHERE owner = \(owner) AND zone_name = \(key.zoneName) AND record_name = \(key.recordName)
            """
        ).decode(String.self).first
    }

    func setShareRoot(_ root: String?, owner: String, zoneName: String, recordNames: [String]) async throws {
        try await query(
            """
            UPDATE record SET share_root = \(root)
            WHERE owner = \(owner) AND zone_name = \(zoneName) AND record_name = ANY(\(recordNames))
            """)
    }

    func logMembershipChanges(_ changes: [MembershipChange], owner: String, zoneName: String, at: Int64)
        async throws
    {
        for change in changes {
            try await query(
                """
                INSERT INTO share_membership (owner, zone_name, seq, record_name, record_type, old_root, new_root,
                    created_at)
                VALUES (\(owner), \(zoneName), \(change.seq), \(change.recordName), \(change.recordType),
                    \(change.oldRoot), \(change.newRoot), \(at))
                """)
        }
    }

    func deleteMembershipChanges(owner: String, zoneName: String) async throws {
        try await query("DELETE FROM share_membership WHERE owner = \(owner) AND zone_name = \(zoneName)")
    }
}
