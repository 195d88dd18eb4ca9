import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Accounts', sessions' and encryption settings' rows in PostgreSQL's SQL.
extension PostgresTransaction {
    // MARK: Accounts and sessions

    func endSessions(user: String, id: String?, sparing: String?, reason: SyncError.Reason, at: Int64)
        async throws -> [String]
    {
        try await query(
            """
            WITH ended AS (
                DELETE FROM session
                WHERE user_record_name = \(user) AND (\(id)::text IS NULL OR id = \(id))
                    AND (\(sparing)::text IS NULL OR token_hash <> \(sparing))
                RETURNING token_hash, user_record_name
            )
            INSERT INTO ended_session (token_hash, user_record_name, reason, ended_at)
            SELECT token_hash, user_record_name, \(reason.rawValue), \(at) FROM ended
            ON CONFLICT (token_hash) DO UPDATE SET reason = EXCLUDED.reason, ended_at = EXCLUDED.ended_at
            RETURNING token_hash
            """
        ).decode(String.self)
    }

    func setPasswordHash(_ hash: String, user: String) async throws {
        try await query("UPDATE account SET password_hash = \(hash) WHERE user_record_name = \(user)")
    }

    func deleteAccountRows(owner: String) async throws {
        try await query("DELETE FROM record WHERE owner = \(owner)")
        try await query("DELETE FROM record_reference WHERE owner = \(owner)")
        try await query("DELETE FROM zone WHERE owner = \(owner)")
        try await query("DELETE FROM share_membership WHERE owner = \(owner)")
        try await query("DELETE FROM share_participant WHERE owner = \(owner)")
        try await query("DELETE FROM share WHERE owner = \(owner)")
        try await query("DELETE FROM client_request WHERE owner = \(owner)")
        try await query(
            "UPDATE asset SET detached_at = 0 WHERE owner = \(owner) OR (owner IS NULL AND uploader = \(owner))")
        // Its sessions and encryption settings go with the row (ON DELETE CASCADE).
        try await query("DELETE FROM account WHERE user_record_name = \(owner)")
    }

    func membershipPlaces(user: String) async throws -> [(owner: String, zoneName: String, recordName: String)] {
        try await query(
            """
            SELECT DISTINCT owner, zone_name, share_name FROM share_participant
            WHERE user_record_name = \(user) AND role != 'owner' AND status != 'removed'
            ORDER BY owner, zone_name, share_name
            """
        ).decode((String, String, String).self).map { (owner: $0.0, zoneName: $0.1, recordName: $0.2) }
    }

    // MARK: Encryption

    func encryptionSettings(owner: String, forUpdate: Bool) async throws -> AccountEncryptionSettings? {
        for (
            salt, costN, blockSizeR, parallelismP, keyVersion, verifier, publicKey, wrappedPrivateKey, recoveryKey,
            recoveryTag, bindingTag
        )
            in try await query(
                """
                SELECT salt, cost_n, block_size_r, parallelism_p, key_version, verifier, public_key,
                    wrapped_private_key, recovery_public_key, recovery_key_tag, recovery_binding_tag
                FROM encryption_settings WHERE user_record_name = \(owner) \(unescaped: forUpdate ? "FOR UPDATE" : "")
                """
            ).decode((Data, Int64, Int64, Int64, Int64, Data, Data?, Data?, Data?, Data?, Data?).self)
        {
            return AccountEncryptionSettings(
                salt: salt, costN: Int(costN), blockSizeR: Int(blockSizeR), parallelismP: Int(parallelismP),
                keyVersion: Int(keyVersion), verifier: verifier,
                keyPair: AccountKeyPair(storedPublicKey: publicKey, wrappedPrivateKey: wrappedPrivateKey),
                recovery: AccountRecovery(storedPublicKey: recoveryKey, keyTag: recoveryTag, bindingTag: bindingTag))
        }
        return nil
    }

    func recovery(owner: String) async throws -> StoredRecovery? {
        for (publicKey, tag, binding, sealed, hash) in try await query(
            """
            SELECT recovery_public_key, recovery_key_tag, recovery_binding_tag, recovery_sealed_key,
                recovery_verifier_hash
            FROM encryption_settings WHERE user_record_name = \(owner)
            """
        ).decode((Data?, Data?, Data?, Data?, Data?).self) {
            guard let recovery = AccountRecovery(storedPublicKey: publicKey, keyTag: tag, bindingTag: binding),
                let sealed, let hash
            else { return nil }
            return StoredRecovery(recovery: recovery, sealedAccountKey: sealed, verifierHash: hash)
        }
        return nil
    }

    func setRecovery(_ recovery: StoredRecovery, owner: String) async throws {
        try await query(
            """
            UPDATE encryption_settings SET recovery_public_key = \(recovery.recovery.publicKey),
                recovery_key_tag = \(recovery.recovery.keyTag), recovery_binding_tag = \(recovery.recovery.bindingTag),
                recovery_sealed_key = \(recovery.sealedAccountKey),
                recovery_verifier_hash = \(recovery.verifierHash)
            WHERE user_record_name = \(owner)
            """)
    }

    func insertEncryptionSettings(_ settings: AccountEncryptionSettings, owner: String, at: Int64) async throws
        -> Bool
    {
        try await !query(
            """
            INSERT INTO encryption_settings
            (user_record_name, salt, cost_n, block_size_r, parallelism_p, key_version, verifier, created_at)
            VALUES (\(owner), \(settings.salt), \(Int64(settings.costN)), \(Int64(settings.blockSizeR)),
                \(Int64(settings.parallelismP)), \(Int64(settings.keyVersion)), \(settings.verifier), \(at))
            ON CONFLICT (user_record_name) DO NOTHING
            RETURNING 1
            """
        ).isEmpty
    }

    func setKeyPair(_ keyPair: AccountKeyPair, owner: String) async throws {
        try await query(
            """
            UPDATE encryption_settings
            SET public_key = \(keyPair.publicKey), wrapped_private_key = \(keyPair.wrappedPrivateKey)
            WHERE user_record_name = \(owner)
            """)
    }

    func replaceEncryptionSettings(_ settings: AccountEncryptionSettings, owner: String) async throws {
        try await query(
            """
            UPDATE encryption_settings SET salt = \(settings.salt), cost_n = \(Int64(settings.costN)),
                block_size_r = \(Int64(settings.blockSizeR)), parallelism_p = \(Int64(settings.parallelismP)),
                key_version = \(Int64(settings.keyVersion)), verifier = \(settings.verifier),
                public_key = \(settings.keyPair?.publicKey), wrapped_private_key = \(settings.keyPair?.wrappedPrivateKey)
            WHERE user_record_name = \(owner)
            """)
    }

    func zoneKeys(owner: String) async throws -> [String: RecordZone.EncryptionKey] {
        var keys: [String: RecordZone.EncryptionKey] = [:]
        for (name, version, wrapped) in try await query(
            """
            SELECT zone_name, key_version, wrapped_key FROM zone
            WHERE owner = \(owner) AND NOT deleted AND wrapped_key IS NOT NULL
            """
        ).decode((String, Int64?, Data?).self) {
            keys[name] = RecordZone.EncryptionKey(storedVersion: version, wrapped: wrapped)
        }
        return keys
    }

    func setZoneWrappedKey(_ wrappedKey: Data, owner: String, zoneName: String, seq: Int64, at: Int64) async throws {
        try await query(
            """
            UPDATE zone SET wrapped_key = \(wrappedKey), change_seq = \(seq), modified_at = \(at)
            WHERE owner = \(owner) AND zone_name = \(zoneName) AND NOT deleted
            """)
    }

    func sharedSlots(user: String) async throws -> [(zoneID: RecordZone.ID, keyVersion: Int)] {
        try await query(
            """
            SELECT p.owner, p.zone_name, p.key_version FROM share_participant p
            JOIN zone z ON z.owner = p.owner AND z.zone_name = p.zone_name AND NOT z.deleted
            WHERE p.user_record_name = \(user) AND p.status = 'accepted' AND p.role <> 'owner'
                AND p.wrapped_key IS NOT NULL AND p.key_version IS NOT NULL
            """
        ).decode((String, String, Int64).self).map {
            (zoneID: RecordZone.ID(zoneName: $0.1, ownerName: $0.0), keyVersion: Int($0.2))
        }
    }

    func setSharedSlotKey(_ key: RecordZone.EncryptionKey, user: String, zoneID: RecordZone.ID) async throws {
        try await query(
            """
            UPDATE share_participant
            SET key_version = \(Int64(key.keyVersion)), wrapped_key = \(key.wrappedKey)
            WHERE owner = \(zoneID.ownerName) AND zone_name = \(zoneID.zoneName)
                AND user_record_name = \(user) AND status = 'accepted' AND role <> 'owner'
                AND wrapped_key IS NOT NULL
            """)
    }
}
