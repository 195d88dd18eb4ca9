import Foundation
import GRDB
import SyncCore

/// Shares in the SQLite file: a row per share, a row per participant (tables of schema version 4, the
/// participants' shared keys of 8), and the reads only participants make. Changes to shares are the
/// shared steps' (`StoreTransaction+Sharing.swift`).
extension SQLiteRecordStore: ShareStore {
    public func sharedZones(user: String) async throws -> [SharedZone] {
        try await pool.read { db in
            SharedZone.gathering(
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT p.owner, p.zone_name, p.share_name, s.root_record_name, p.permission, p.key_version,
                            p.wrapped_key, p.shared_key_version, p.shared_key, z.change_seq
                        FROM share_participant p
                        JOIN share s ON s.owner = p.owner AND s.zone_name = p.zone_name AND s.record_name = p.share_name
                        JOIN zone z ON z.owner = p.owner AND z.zone_name = p.zone_name AND z.deleted = 0
                        WHERE p.user_record_name = ? AND p.status = 'accepted' AND p.role != 'owner'
                        ORDER BY p.owner, p.zone_name, p.share_name
                        """, arguments: [user]
                ).map { row in
                    let zone = SharedZone(
                        owner: row["owner"], zoneName: row["zone_name"],
                        permission: ShareParticipant.Permission(rawValue: row["permission"]) ?? .none,
                        encryptionKey: RecordZone.EncryptionKey(
                            storedVersion: row["key_version"], wrapped: row["wrapped_key"]),
                        sharedKey: RecordZone.EncryptionKey(
                            storedVersion: row["shared_key_version"], wrapped: row["shared_key"]),
                        changeSeq: row["change_seq"])
                    return (zone, row["root_record_name"], row["share_name"])
                })
        }
    }

    public func audience(owner: String, zoneNames: Set<String>) async throws -> Set<String> {
        guard !zoneNames.isEmpty else { return [] }
        return try await pool.read { db in
            var users = Set<String>()
            let statement = try db.cachedStatement(
                sql: """
                    SELECT user_record_name FROM share_participant
                    WHERE owner = ? AND zone_name = ? AND status = 'accepted' AND role != 'owner'
                    """)
            for zoneName in zoneNames {
                users.formUnion(try String.fetchAll(statement, arguments: [owner, zoneName]))
            }
            return users
        }
    }
}
