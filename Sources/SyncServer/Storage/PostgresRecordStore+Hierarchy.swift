import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Record hierarchies in PostgreSQL, as in the SQLite store (`SQLiteRecordStore+Hierarchy.swift`):
/// parent and shared root are columns, and `share_membership` logs records that joined or left a
/// shared hierarchy without being saved themselves.
extension PostgresRecordStore {
    // MARK: Before planning

    /// The planner's context for `request`: the store's answers to what ``RecordHierarchy/Lookup`` asks.
    static func hierarchyContext(
        _ connection: PostgresConnection, owner: String, request: ModifyRecordsRequest,
        base: RecordHierarchy.Context, logger: Logger
    ) async throws -> RecordHierarchy.Context {
        var lookup = RecordHierarchy.Lookup(request: request, base: base)
        while let start = lookup.nextChainStart() {
            lookup.addChain(try await chain(connection, owner: owner, from: start, logger: logger), from: start)
        }
        for key in lookup.shareBelowQuestions
        where try await hasShareBelow(connection, owner: owner, key, logger: logger) {
            lookup.addShareBelow(key)
        }
        for key in lookup.adoptionQuestions where try await adopts(connection, owner: owner, key, logger: logger) {
            lookup.addAdoption(key)
        }
        return lookup.context
    }

    /// The live record `key` and the records above it, nearest first, each with its stored parent.
    private static func chain(
        _ connection: PostgresConnection, owner: String, from key: RecordKey, logger: Logger
    ) async throws -> [(name: String, node: RecordHierarchy.Node)] {
        var chain: [(name: String, node: RecordHierarchy.Node)] = []
        for try await (name, type, parent, share, root) in try await connection.query(
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
            """, logger: logger
        ).decode((String, String, String?, String?, String?).self) {
            chain.append(
                (name, RecordHierarchy.Node(recordType: type, parentName: parent, shareName: share, shareRoot: root)))
        }
        return chain
    }

    /// Whether `key` names no live record while live records name it as their parent.
    private static func adopts(
        _ connection: PostgresConnection, owner: String, _ key: RecordKey, logger: Logger
    ) async throws -> Bool {
        for try await adopts in try await connection.query(
            """
            SELECT NOT EXISTS (SELECT 1 FROM record WHERE owner = \(owner) AND zone_name = \(key.zoneName)
                    AND record_name = \(key.recordName) AND NOT deleted)
                AND EXISTS (SELECT 1 FROM record WHERE owner = \(owner) AND zone_name = \(key.zoneName)
                    AND parent_name = \(key.recordName) AND NOT deleted)
            """, logger: logger
        ).decode(Bool.self) {
            return adopts
        }
        return false
    }

    /// Whether a live record below `key` is the root of a share.
    private static func hasShareBelow(
        _ connection: PostgresConnection, owner: String, _ key: RecordKey, logger: Logger
    ) async throws -> Bool {
        try await !connection.query(
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
            """, logger: logger
        ).collect().isEmpty
    }

    // MARK: After planning

    /// Writes the moves of a plan's root changes (``RecordHierarchy/MoveLog``), logged at the owner's
    /// change numbers after `seq`.
    static func moveDescendants(
        of changes: [RecordHierarchy.RootChange], owner: String, seq: Int64, now: Date,
        _ connection: PostgresConnection, logger: Logger
    ) async throws -> RecordHierarchy.MoveLog {
        var moves = RecordHierarchy.MoveLog(after: seq)
        for change in changes {
            let zoneName = change.key.zoneName
            var ownType: String?
            if change.logsOwnMove {
                for try await type in try await connection.query(
                    """
                    SELECT record_type FROM record
                    WHERE owner = \(owner) AND zone_name = \(zoneName) AND record_name = \(change.key.recordName)
                    """, logger: logger
                ).decode(String.self) {
                    ownType = type
                }
            }
            let (moved, entries) = moves.add(
                change, ownType: ownType,
                descendants: try await descendants(connection, owner: owner, of: change.key, logger: logger))
            for name in moved {
                try await connection.query(
                    """
                    UPDATE record SET share_root = \(change.new)
                    WHERE owner = \(owner) AND zone_name = \(zoneName) AND record_name = \(name)
                    """, logger: logger)
            }
            for entry in entries {
                try await connection.query(
                    """
                    INSERT INTO share_membership (owner, zone_name, seq, record_name, record_type, old_root, new_root,
                        created_at)
                    VALUES (\(owner), \(zoneName), \(entry.seq), \(entry.recordName), \(entry.recordType),
                        \(entry.oldRoot), \(entry.newRoot), \(now.millisecondsSince1970))
                    """, logger: logger)
            }
        }
        return moves
    }

    /// The live records below `key`, however deep, down to (not into) the roots of other shares. (The
    /// recursion ends: a name is visited once.)
    private static func descendants(
        _ connection: PostgresConnection, owner: String, of key: RecordKey, logger: Logger
    ) async throws -> [RecordHierarchy.Descendant] {
        var rows: [RecordHierarchy.Descendant] = []
        for try await (name, type, root) in try await connection.query(
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
            """, logger: logger
        ).decode((String, String, String?).self) {
            rows.append(RecordHierarchy.Descendant(name: name, type: type, root: root))
        }
        return rows
    }

    // MARK: Reading for participants

    public func zoneChangesAndMoves(
        owner: String, zoneName: String, since: ChangeCursor, limit: Int, excludingWriter: String?
    ) async throws -> (page: ZoneChangePage, moves: [MembershipChange]) {
        try await snapshot { connection in
            let page = try await Self.zoneChanges(
                connection, owner: owner, zoneName: zoneName, since: since, limit: limit,
                excludingWriter: excludingWriter, logger: self.logger)
            var moves: [MembershipChange] = []
            for try await (seq, name, type, old, new) in try await connection.query(
                """
                SELECT seq, record_name, record_type, old_root, new_root FROM share_membership
                WHERE owner = \(owner) AND zone_name = \(zoneName) AND seq > \(since.seq) ORDER BY seq LIMIT \(limit + 1)
                """, logger: self.logger
            ).decode((Int64, String, String, String?, String?).self) {
                moves.append(MembershipChange(recordName: name, recordType: type, oldRoot: old, newRoot: new, seq: seq))
            }
            return (page, moves)
        }
    }
}
