import Foundation
import GRDB
import SyncCore

/// Record hierarchies in the SQLite file: the schema (migration v7), and participants' fetches, which
/// read the log of membership changes beside the records (the writes are the shared steps',
/// `StoreTransaction+Hierarchy.swift`, in `SQLiteTransaction+Hierarchy.swift`'s SQL).
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
