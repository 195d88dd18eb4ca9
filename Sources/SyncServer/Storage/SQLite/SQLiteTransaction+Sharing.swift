import Foundation
import GRDB
import SyncCore

/// Shares' rows in SQLite's SQL: a row per share, a row per participant.
extension SQLiteTransaction {
    func shares(owner: String, zoneName: String, recordName: String?) throws -> [StoredShare] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT * FROM share WHERE owner = ?1 AND zone_name = ?2 AND (?3 IS NULL OR record_name = ?3)
                ORDER BY record_name
                """,
            arguments: [owner, zoneName, recordName]
        ).map(share(from:))
    }

    func shareLocation(token: String) throws -> (owner: String, zoneName: String, recordName: String)? {
        try Row.fetchOne(db, sql: "SELECT owner, zone_name, record_name FROM share WHERE token = ?", arguments: [token])
            .map { ($0[0], $0[1], $0[2]) }
    }

    func deleteShareRows(owner: String, zoneName: String, recordName: String?) throws {
        // NULL names every share of the zone.
        try db.execute(
            sql: """
                DELETE FROM share_participant WHERE owner = ?1 AND zone_name = ?2 AND (?3 IS NULL OR share_name = ?3)
                """, arguments: [owner, zoneName, recordName])
        try db.execute(
            sql: "DELETE FROM share WHERE owner = ?1 AND zone_name = ?2 AND (?3 IS NULL OR record_name = ?3)",
            arguments: [owner, zoneName, recordName])
    }

    func insertShareRows(_ share: StoredShare) throws {
        try db.execute(
            sql: """
                INSERT INTO share (owner, zone_name, record_name, root_record_name, token, public_permission,
                    invitation_key_version, invitation_key)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                share.owner, share.zoneName, share.recordName, share.rootRecordName, share.token,
                share.publicPermission.rawValue, share.invitationKey?.keyVersion, share.invitationKey?.wrappedKey,
            ])
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO share_participant (owner, zone_name, share_name, position, user_record_name, username, role,
                    permission, status, key_version, wrapped_key, shared_key_version, shared_key)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        for (position, participant) in share.participants.enumerated() {
            try insert.execute(arguments: [
                share.owner, share.zoneName, share.recordName, position, participant.userRecordName,
                participant.username, participant.role.rawValue, participant.permission.rawValue,
                participant.status.rawValue, participant.encryptionKey?.keyVersion,
                participant.encryptionKey?.wrappedKey, participant.sharedKey?.keyVersion,
                participant.sharedKey?.wrappedKey,
            ])
        }
    }

    private func share(from row: Row) throws -> StoredShare {
        let owner: String = row["owner"]
        let zoneName: String = row["zone_name"]
        let recordName: String = row["record_name"]
        let participants = try Row.fetchAll(
            db,
            sql: """
                SELECT * FROM share_participant WHERE owner = ? AND zone_name = ? AND share_name = ?
                ORDER BY position
                """,
            arguments: [owner, zoneName, recordName]
        ).map { row in
            StoredParticipant(
                userRecordName: row["user_record_name"], username: row["username"],
                role: ShareParticipant.Role(rawValue: row["role"]) ?? .privateUser,
                permission: ShareParticipant.Permission(rawValue: row["permission"]) ?? .none,
                status: ShareParticipant.AcceptanceStatus(rawValue: row["status"]) ?? .removed,
                encryptionKey: RecordZone.EncryptionKey(storedVersion: row["key_version"], wrapped: row["wrapped_key"]),
                sharedKey: RecordZone.EncryptionKey(
                    storedVersion: row["shared_key_version"], wrapped: row["shared_key"]))
        }
        return StoredShare(
            owner: owner, zoneName: zoneName, recordName: recordName, rootRecordName: row["root_record_name"],
            token: row["token"],
            publicPermission: ShareParticipant.Permission(rawValue: row["public_permission"]) ?? .none,
            invitationKey: RecordZone.EncryptionKey(
                storedVersion: row["invitation_key_version"], wrapped: row["invitation_key"]),
            participants: participants)
    }
}
