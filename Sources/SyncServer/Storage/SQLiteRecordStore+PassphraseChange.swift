import Foundation
import GRDB
import SyncCore

/// A passphrase change in the SQLite file: one write transaction reads what the change must
/// cover and writes the new settings and every key wrapped again.
extension SQLiteRecordStore {
    public func changeEncryption(owner: String, _ change: EncryptionChangeRequest, now: Date) async throws
        -> (settings: AccountEncryptionSettings, applied: Bool)
    {
        try await pool.write { db in
            var zoneKeys: [String: RecordZone.EncryptionKey] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT zone_name, key_version, wrapped_key FROM zone
                    WHERE owner = ? AND deleted = 0 AND wrapped_key IS NOT NULL
                    """, arguments: [owner])
            {
                zoneKeys[row["zone_name"]] = RecordZone.EncryptionKey(
                    storedVersion: row["key_version"], wrapped: row["wrapped_key"])
            }
            var sharedSlots: [RecordZone.ID: Int] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT p.owner, p.zone_name, MAX(p.key_version) AS version FROM share_participant p
                    JOIN zone z ON z.owner = p.owner AND z.zone_name = p.zone_name AND z.deleted = 0
                    WHERE p.user_record_name = ? AND p.status = 'accepted' AND p.role != 'owner'
                        AND p.wrapped_key IS NOT NULL
                    GROUP BY p.owner, p.zone_name
                    """, arguments: [owner])
            {
                sharedSlots[RecordZone.ID(zoneName: row["zone_name"], ownerName: row["owner"])] = row["version"]
            }
            let stored = PassphraseChange.Stored(
                settings: try Self.encryptionSettings(db, owner: owner), zoneKeys: zoneKeys, sharedSlots: sharedSlots)
            let next: AccountEncryptionSettings
            switch try PassphraseChange.decide(change, stored: stored) {
            case .retry(let settings): return (settings, false)
            case .apply(let settings): next = settings
            }
            try db.execute(
                sql: """
                    UPDATE encryption_settings SET salt = ?, cost_n = ?, block_size_r = ?, parallelism_p = ?,
                        key_version = ?, verifier = ?, public_key = ?, wrapped_private_key = ?
                    WHERE user_record_name = ?
                    """,
                arguments: [
                    next.salt, next.costN, next.blockSizeR, next.parallelismP, next.keyVersion, next.verifier,
                    next.keyPair?.publicKey, next.keyPair?.wrappedPrivateKey, owner,
                ])
            // Each zone's key is a change of the zone, as a key a zone gains is: devices see it.
            var seq = try Self.changeSeq(db, owner: owner)
            for update in change.zoneKeys {
                seq += 1
                try db.execute(
                    sql: """
                        UPDATE zone SET wrapped_key = ?, change_seq = ?, modified_at = ?
                        WHERE owner = ? AND zone_name = ? AND deleted = 0
                        """,
                    arguments: [
                        update.encryptionKey.wrappedKey, seq, now.millisecondsSince1970, owner, update.zoneID.zoneName,
                    ])
            }
            try Self.setChangeSeq(db, owner: owner, seq: seq)
            for update in change.sharedZoneKeys {
                try db.execute(
                    sql: """
                        UPDATE share_participant SET key_version = ?, wrapped_key = ?
                        WHERE owner = ? AND zone_name = ? AND user_record_name = ? AND status = 'accepted'
                            AND role != 'owner' AND wrapped_key IS NOT NULL
                        """,
                    arguments: [
                        update.encryptionKey.keyVersion, update.encryptionKey.wrappedKey, update.zoneID.ownerName,
                        update.zoneID.zoneName, owner,
                    ])
            }
            return (next, true)
        }
    }
}
