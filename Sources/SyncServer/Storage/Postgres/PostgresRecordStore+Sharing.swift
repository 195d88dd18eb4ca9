import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Shares in PostgreSQL: a row per share, a row per participant. Every change to a share runs under
/// its owner's account lock, as every other change to the owner's data does.
extension PostgresRecordStore: ShareStore {

    public func sharedZones(user: String) async throws -> [SharedZone] {
        var rows: [(zone: SharedZone, root: String?, shareRecordName: String)] = []
        for (owner, zoneName, shareName, root, permission, version, wrapped, sharedVersion, shared, seq)
            in try await query(
                """
                SELECT p.owner, p.zone_name, p.share_name, s.root_record_name, p.permission, p.key_version,
                    p.wrapped_key, p.shared_key_version, p.shared_key, z.change_seq
                FROM share_participant p
                JOIN share s ON s.owner = p.owner AND s.zone_name = p.zone_name AND s.record_name = p.share_name
                JOIN zone z ON z.owner = p.owner AND z.zone_name = p.zone_name AND NOT z.deleted
                WHERE p.user_record_name = \(user) AND p.status = 'accepted' AND p.role <> 'owner'
                ORDER BY p.owner COLLATE "C", p.zone_name COLLATE "C", p.share_name COLLATE "C"
                """, logger: logger
            ).decode((String, String, String, String?, String, Int64?, Data?, Int64?, Data?, Int64).self)
        {
            let zone = SharedZone(
                owner: owner, zoneName: zoneName,
                permission: ShareParticipant.Permission(rawValue: permission) ?? .none,
                encryptionKey: RecordZone.EncryptionKey(storedVersion: version, wrapped: wrapped),
                sharedKey: RecordZone.EncryptionKey(storedVersion: sharedVersion, wrapped: shared), changeSeq: seq)
            rows.append((zone, root, shareName))
        }
        return SharedZone.gathering(rows)
    }

    public func audience(owner: String, zoneNames: Set<String>) async throws -> Set<String> {
        guard !zoneNames.isEmpty else { return [] }
        var users = Set<String>()
        for (user, ) in try await query(
            """
            SELECT DISTINCT user_record_name FROM share_participant
            WHERE owner = \(owner) AND zone_name = ANY(\(Array(zoneNames))) AND status = 'accepted' AND role <> 'owner'
            """, logger: logger
        ).decode((String,).self) {
            users.insert(user)
        }
        return users
    }
}
