import Foundation
import Logging
import PostgresNIO
import SyncCore

/// A passphrase change in PostgreSQL: one transaction that holds the account's lock and the locks
/// of the owners whose shares hold the account's slots (their share saves rewrite those rows),
/// taken in name order so that two changes never wait on each other in a circle.
extension PostgresRecordStore {
    public func changeEncryption(owner: String, _ change: EncryptionChangeRequest, now: Date) async throws
        -> (settings: AccountEncryptionSettings, applied: Bool)
    {
        try await transaction { connection in
            let logger = self.logger
            var owners = Set([owner])
            for (zoneID, _) in try await Self.sharedSlots(connection, user: owner, logger: logger) {
                owners.insert(zoneID.ownerName)
            }
            for name in owners.sorted() { _ = try await Self.lockAccount(connection, owner: name, logger: logger) }

            var zoneKeys: [String: RecordZone.EncryptionKey] = [:]
            for try await (name, version, wrapped) in try await connection.query(
                """
                SELECT zone_name, key_version, wrapped_key FROM zone
                WHERE owner = \(owner) AND NOT deleted AND wrapped_key IS NOT NULL
                """, logger: logger
            ).decode((String, Int64?, Data?).self) {
                zoneKeys[name] = RecordZone.EncryptionKey(storedVersion: version, wrapped: wrapped)
            }
            let stored = PassphraseChange.Stored(
                settings: try await Self.encryptionSettings(connection, owner: owner, forUpdate: true, logger: logger),
                zoneKeys: zoneKeys,
                sharedSlots: Dictionary(
                    try await Self.sharedSlots(connection, user: owner, logger: logger).map { ($0.0, $0.1) },
                    uniquingKeysWith: max))
            let next: AccountEncryptionSettings
            switch try PassphraseChange.decide(change, stored: stored) {
            case .retry(let settings): return (settings, false)
            case .apply(let settings): next = settings
            }
            try await connection.query(
                """
                UPDATE encryption_settings SET salt = \(next.salt), cost_n = \(Int64(next.costN)),
                    block_size_r = \(Int64(next.blockSizeR)), parallelism_p = \(Int64(next.parallelismP)),
                    key_version = \(Int64(next.keyVersion)), verifier = \(next.verifier),
                    public_key = \(next.keyPair?.publicKey), wrapped_private_key = \(next.keyPair?.wrappedPrivateKey)
                WHERE user_record_name = \(owner)
                """, logger: logger)
            // Each zone's key is a change of the zone, as a key a zone gains is: devices see it.
            var seq = try await Self.seqs(connection, owner: owner, lock: false, logger: logger).current
            for update in change.zoneKeys {
                seq += 1
                try await connection.query(
                    """
                    UPDATE zone SET wrapped_key = \(update.encryptionKey.wrappedKey), change_seq = \(seq),
                        modified_at = \(now.millisecondsSince1970)
                    WHERE owner = \(owner) AND zone_name = \(update.zoneID.zoneName) AND NOT deleted
                    """, logger: logger)
            }
            try await Self.setChangeSeq(connection, owner: owner, seq: seq, logger: logger)
            for update in change.sharedZoneKeys {
                try await connection.query(
                    """
                    UPDATE share_participant
                    SET key_version = \(Int64(update.encryptionKey.keyVersion)), wrapped_key = \(update.encryptionKey.wrappedKey)
                    WHERE owner = \(update.zoneID.ownerName) AND zone_name = \(update.zoneID.zoneName)
                        AND user_record_name = \(owner) AND status = 'accepted' AND role <> 'owner'
                        AND wrapped_key IS NOT NULL
                    """, logger: logger)
            }
            return (next, true)
        }
    }

    /// The live shared zones where `user` accepted a share and has an own slot, with the slot's
    /// newest key version (one row per share: a zone's hierarchies may each have one).
    private static func sharedSlots(_ connection: PostgresConnection, user: String, logger: Logger) async throws
        -> [(RecordZone.ID, Int)]
    {
        var slots: [(RecordZone.ID, Int)] = []
        for try await (shareOwner, zoneName, version) in try await connection.query(
            """
            SELECT p.owner, p.zone_name, p.key_version FROM share_participant p
            JOIN zone z ON z.owner = p.owner AND z.zone_name = p.zone_name AND NOT z.deleted
            WHERE p.user_record_name = \(user) AND p.status = 'accepted' AND p.role <> 'owner'
                AND p.wrapped_key IS NOT NULL AND p.key_version IS NOT NULL
            """, logger: logger
        ).decode((String, String, Int64).self) {
            slots.append((RecordZone.ID(zoneName: zoneName, ownerName: shareOwner), Int(version)))
        }
        return slots
    }
}
