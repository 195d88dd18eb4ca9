import Foundation
import GRDB
import SyncCore

/// Record hierarchies in the SQLite file: each record's parent and shared root are columns, and a
/// log of the records that joined or left a shared hierarchy without being saved themselves
/// (``MembershipChange``), which participants' fetches read beside the records.
extension SQLiteRecordStore {
    static let hierarchyMigration = """
        ALTER TABLE record ADD COLUMN parent_name TEXT;
        ALTER TABLE record ADD COLUMN share_name TEXT;
        ALTER TABLE record ADD COLUMN share_root TEXT;
        CREATE INDEX record_by_parent ON record(owner, zone_name, parent_name) WHERE parent_name IS NOT NULL;
        CREATE INDEX record_by_share_root ON record(owner, zone_name, share_root) WHERE share_root IS NOT NULL;
        CREATE TABLE share_membership (
            owner TEXT NOT NULL,
            zone_name TEXT NOT NULL,
            seq INTEGER NOT NULL,
            record_name TEXT NOT NULL,
            record_type TEXT NOT NULL,
            old_root TEXT,
            new_root TEXT,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (owner, zone_name, seq)
        ) WITHOUT ROWID;
        CREATE TABLE share_v7 (
            owner TEXT NOT NULL,
            zone_name TEXT NOT NULL,
            record_name TEXT NOT NULL,
            root_record_name TEXT,
            token TEXT NOT NULL UNIQUE,
            public_permission TEXT NOT NULL,
            invitation_key_version INTEGER,
            invitation_key BLOB,
            PRIMARY KEY (owner, zone_name, record_name)
        ) WITHOUT ROWID;
        INSERT INTO share_v7
            SELECT owner, zone_name, 'cloudkit.zoneshare', NULL, token, public_permission, invitation_key_version,
                invitation_key
            FROM share;
        DROP TABLE share;
        ALTER TABLE share_v7 RENAME TO share;
        CREATE TABLE share_participant_v7 (
            owner TEXT NOT NULL,
            zone_name TEXT NOT NULL,
            share_name TEXT NOT NULL,
            position INTEGER NOT NULL,
            user_record_name TEXT NOT NULL,
            username TEXT NOT NULL,
            role TEXT NOT NULL,
            permission TEXT NOT NULL,
            status TEXT NOT NULL,
            key_version INTEGER,
            wrapped_key BLOB,
            PRIMARY KEY (owner, zone_name, share_name, user_record_name)
        ) WITHOUT ROWID;
        INSERT INTO share_participant_v7
            SELECT owner, zone_name, 'cloudkit.zoneshare', position, user_record_name, username, role, permission,
                status, key_version, wrapped_key
            FROM share_participant;
        DROP TABLE share_participant;
        ALTER TABLE share_participant_v7 RENAME TO share_participant;
        CREATE INDEX share_participant_by_user ON share_participant(user_record_name, status);
        """

    // MARK: Before planning

    /// The planner's context for `request`: the store's answers to what ``RecordHierarchy/Lookup`` asks.
    static func hierarchyContext(
        _ db: Database, owner: String, request: ModifyRecordsRequest, base: RecordHierarchy.Context
    ) throws -> RecordHierarchy.Context {
        var lookup = RecordHierarchy.Lookup(request: request, base: base)
        while let start = lookup.nextChainStart() {
            lookup.addChain(try chain(db, owner: owner, from: start), from: start)
        }
        for key in lookup.shareBelowQuestions where try hasShareBelow(db, owner: owner, key) {
            lookup.addShareBelow(key)
        }
        for key in lookup.adoptionQuestions where try adopts(db, owner: owner, key) {
            lookup.addAdoption(key)
        }
        return lookup.context
    }

    /// The live record `key` and the records above it, nearest first, each with its stored parent.
    private static func chain(_ db: Database, owner: String, from key: RecordKey) throws -> [(
        name: String, node: RecordHierarchy.Node
    )] {
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

    /// Whether `key` names no live record while live records name it as their parent.
    private static func adopts(_ db: Database, owner: String, _ key: RecordKey) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT NOT EXISTS (SELECT 1 FROM record WHERE owner = ?1 AND zone_name = ?2 AND record_name = ?3 AND deleted = 0)
                        AND EXISTS (SELECT 1 FROM record WHERE owner = ?1 AND zone_name = ?2 AND parent_name = ?3 AND deleted = 0)
                    """), arguments: [owner, key.zoneName, key.recordName]) == true
    }

    /// Whether a live record below `key` is the root of a share.
    private static func hasShareBelow(_ db: Database, owner: String, _ key: RecordKey) throws -> Bool {
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

    // MARK: After planning

    /// Writes the moves of a plan's root changes (``RecordHierarchy/MoveLog``), logged at the owner's
    /// change numbers after `seq`.
    static func moveDescendants(
        of changes: [RecordHierarchy.RootChange], owner: String, seq: Int64, now: Date, _ db: Database
    ) throws -> RecordHierarchy.MoveLog {
        var moves = RecordHierarchy.MoveLog(after: seq)
        let log = try db.cachedStatement(
            sql: """
                INSERT INTO share_membership (owner, zone_name, seq, record_name, record_type, old_root, new_root, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
        let move = try db.cachedStatement(
            sql: "UPDATE record SET share_root = ? WHERE owner = ? AND zone_name = ? AND record_name = ?")
        for change in changes {
            let zoneName = change.key.zoneName
            let ownType =
                change.logsOwnMove
                ? try String.fetchOne(
                    db, sql: "SELECT record_type FROM record WHERE owner = ? AND zone_name = ? AND record_name = ?",
                    arguments: [owner, zoneName, change.key.recordName]) : nil
            let (moved, entries) = moves.add(
                change, ownType: ownType, descendants: try descendants(db, owner: owner, of: change.key))
            for name in moved {
                try move.execute(arguments: [change.new, owner, zoneName, name])
            }
            for entry in entries {
                try log.execute(arguments: [
                    owner, zoneName, entry.seq, entry.recordName, entry.recordType, entry.oldRoot, entry.newRoot,
                    now.millisecondsSince1970,
                ])
            }
        }
        return moves
    }

    /// The live records below `key`, however deep, down to (not into) the roots of other shares. (The
    /// recursion ends: a name is visited once.)
    private static func descendants(
        _ db: Database, owner: String, of key: RecordKey
    ) throws -> [RecordHierarchy.Descendant] {
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

    // MARK: Reading for participants

    public func zoneChangesAndMoves(
        owner: String, zoneName: String, since: ChangeCursor, limit: Int, excludingWriter: String?
    ) async throws -> (page: ZoneChangePage, moves: [MembershipChange]) {
        try await pool.read { db in
            let page = try Self.zoneChanges(
                db, owner: owner, zoneName: zoneName, since: since, limit: limit, excludingWriter: excludingWriter)
            let moves = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT seq, record_name, record_type, old_root, new_root FROM share_membership
                        WHERE owner = ? AND zone_name = ? AND seq > ? ORDER BY seq LIMIT ?
                        """), arguments: [owner, zoneName, since.seq, limit + 1]
            ).map {
                MembershipChange(
                    recordName: $0["record_name"], recordType: $0["record_type"], oldRoot: $0["old_root"],
                    newRoot: $0["new_root"], seq: $0["seq"])
            }
            return (page, moves)
        }
    }
}
