import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Shares' rows in PostgreSQL's SQL: a row per share, a row per participant.
extension PostgresTransaction {
    func shares(owner: String, zoneName: String, recordName: String?) async throws -> [StoredShare] {
        var shares: [StoredShare] = []
        for (name, root, token, publicPermission, version, wrapped) in try await query(
            """
            SELECT record_name, root_record_name, token, public_permission, invitation_key_version, invitation_key
            FROM share
            WHERE owner = \(owner) AND zone_name = \(zoneName) AND (\(recordName)::text IS NULL OR record_name = \(recordName))
            ORDER BY record_name COLLATE "C"
            """
        ).decode((String, String?, String, String, Int64?, Data?).self) {
            shares.append(
                StoredShare(
                    owner: owner, zoneName: zoneName, recordName: name, rootRecordName: root, token: token,
                    publicPermission: ShareParticipant.Permission(rawValue: publicPermission) ?? .none,
                    invitationKey: RecordZone.EncryptionKey(storedVersion: version, wrapped: wrapped),
                    participants: []))
        }
        for index in shares.indices {
            for (user, username, role, permission, status, version, wrapped, sharedVersion, shared) in try await query(
                """
                SELECT user_record_name, username, role, permission, status, key_version, wrapped_key,
                    shared_key_version, shared_key
                FROM share_participant
                WHERE owner = \(owner) AND zone_name = \(zoneName) AND share_name = \(shares[index].recordName)
                ORDER BY position
                """
            ).decode((String, String, String, String, String, Int64?, Data?, Int64?, Data?).self) {
                shares[index].participants.append(
                    StoredParticipant(
                        userRecordName: user, username: username,
                        role: ShareParticipant.Role(rawValue: role) ?? .privateUser,
                        permission: ShareParticipant.Permission(rawValue: permission) ?? .none,
                        status: ShareParticipant.AcceptanceStatus(rawValue: status) ?? .removed,
                        encryptionKey: RecordZone.EncryptionKey(storedVersion: version, wrapped: wrapped),
                        sharedKey: RecordZone.EncryptionKey(storedVersion: sharedVersion, wrapped: shared)))
            }
        }
        return shares
    }

    func shareLocation(token: String) async throws -> (owner: String, zoneName: String, recordName: String)? {
        try await query("SELECT owner, zone_name, record_name FROM share WHERE token = \(token)")
            .decode((String, String, String).self).first.map { (owner: $0.0, zoneName: $0.1, recordName: $0.2) }
    }

    func deleteShareRows(owner: String, zoneName: String, recordName: String?) async throws {
        // NULL names every share of the zone.
        try await query(
            """
            DELETE FROM share_participant WHERE owner = \(owner) AND zone_name = \(zoneName)
                AND (\(recordName)::text IS NULL OR share_name = \(recordName))
            """)
        try await query(
            """
            DELETE FROM share WHERE owner = \(owner) AND zone_name = \(zoneName)
                AND (\(recordName)::text IS NULL OR record_name = \(recordName))
            """)
    }

    func insertShareRows(_ share: StoredShare) async throws {
        try await query(
            """
            INSERT INTO share (owner, zone_name, record_name, root_record_name, token, public_permission,
                invitation_key_version, invitation_key)
            VALUES (\(share.owner), \(share.zoneName), \(share.recordName), \(share.rootRecordName), \(share.token),
                \(share.publicPermission.rawValue), \(share.invitationKey.map { Int64($0.keyVersion) }),
                \(share.invitationKey?.wrappedKey))
            """)
        for (position, participant) in share.participants.enumerated() {
            try await query(
                """
                INSERT INTO share_participant (owner, zone_name, share_name, position, user_record_name, username,
                    role, permission, status, key_version, wrapped_key, shared_key_version, shared_key)
                VALUES (\(share.owner), \(share.zoneName), \(share.recordName), \(Int64(position)),
                    \(participant.userRecordName), \(participant.username), \(participant.role.rawValue),
                    \(participant.permission.rawValue), \(participant.status.rawValue),
                    \(participant.encryptionKey.map { Int64($0.keyVersion) }), \(participant.encryptionKey?.wrappedKey),
                    \(participant.sharedKey.map { Int64($0.keyVersion) }), \(participant.sharedKey?.wrappedKey))
                """)
        }
    }
}
