import Foundation
import GRDB
import SyncCore

/// Accounts', sessions' and encryption settings' rows in SQLite's SQL.
extension SQLiteTransaction {
    // MARK: Accounts and sessions

    func endSessions(user: String, id: String?, sparing: String?, reason: SyncError.Reason, at: Int64) throws
        -> [String]
    {
        let condition = "user_record_name = ?1 AND (?2 IS NULL OR id = ?2) AND (?3 IS NULL OR token_hash != ?3)"
        let arguments: StatementArguments = [user, id, sparing]
        let hashes = try String.fetchAll(
            db, sql: "SELECT token_hash FROM session WHERE \(condition)", arguments: arguments)
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO ended_session (token_hash, user_record_name, reason, ended_at)
                SELECT token_hash, user_record_name, ?4, ?5 FROM session WHERE \(condition)
                """, arguments: arguments + [reason.rawValue, at])
        try db.execute(sql: "DELETE FROM session WHERE \(condition)", arguments: arguments)
        return hashes
    }

    func setPasswordHash(_ hash: String, user: String) throws {
        try db.execute(
            sql: "UPDATE account SET password_hash = ? WHERE user_record_name = ?", arguments: [hash, user])
    }

    func deleteAccountRows(owner: String) throws {
        for table in [
            "record", "record_reference", "zone", "share_membership", "share_participant", "share", "client_request",
        ] {
            try db.execute(sql: "DELETE FROM \(table) WHERE owner = ?", arguments: [owner])
        }
        try db.execute(
            sql: "UPDATE asset SET detached_at = 0 WHERE owner = ? OR (owner IS NULL AND uploader = ?)",
            arguments: [owner, owner])
        // Its sessions and encryption settings go with the row (ON DELETE CASCADE).
        try db.execute(sql: "DELETE FROM account WHERE user_record_name = ?", arguments: [owner])
    }

    func membershipPlaces(user: String) throws -> [(owner: String, zoneName: String, recordName: String)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT DISTINCT owner, zone_name, share_name FROM share_participant
                WHERE user_record_name = ? AND role != 'owner' AND status != 'removed'
                ORDER BY owner, zone_name, share_name
                """, arguments: [user]
        ).map { (owner: $0[0], zoneName: $0[1], recordName: $0[2]) }
    }

    // MARK: Encryption

    /// (The writer is held already: `forUpdate` changes nothing.)
    func encryptionSettings(owner: String, forUpdate: Bool) throws -> AccountEncryptionSettings? {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT * FROM encryption_settings WHERE user_record_name = ?", arguments: [owner])
        else { return nil }
        return AccountEncryptionSettings(
            salt: row["salt"], costN: row["cost_n"], blockSizeR: row["block_size_r"],
            parallelismP: row["parallelism_p"], keyVersion: row["key_version"], verifier: row["verifier"],
            keyPair: AccountKeyPair(storedPublicKey: row["public_key"], wrappedPrivateKey: row["wrapped_private_key"]),
            recovery: AccountRecovery(
                storedPublicKey: row["recovery_public_key"], keyTag: row["recovery_key_tag"],
                bindingTag: row["recovery_binding_tag"]))
    }

    func recovery(owner: String) throws -> StoredRecovery? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT recovery_public_key, recovery_key_tag, recovery_binding_tag, recovery_sealed_key,
                        recovery_verifier_hash
                    FROM encryption_settings WHERE user_record_name = ?
                    """, arguments: [owner]),
            let recovery = AccountRecovery(storedPublicKey: row[0], keyTag: row[1], bindingTag: row[2]),
            let sealed: Data = row[3], let hash: Data = row[4]
        else { return nil }
        return StoredRecovery(recovery: recovery, sealedAccountKey: sealed, verifierHash: hash)
    }

    func setRecovery(_ recovery: StoredRecovery, owner: String) throws {
        try db.execute(
            sql: """
                UPDATE encryption_settings SET recovery_public_key = ?, recovery_key_tag = ?, recovery_binding_tag = ?,
                    recovery_sealed_key = ?, recovery_verifier_hash = ?
                WHERE user_record_name = ?
                """,
            arguments: [
                recovery.recovery.publicKey, recovery.recovery.keyTag, recovery.recovery.bindingTag,
                recovery.sealedAccountKey, recovery.verifierHash, owner,
            ])
    }

    func insertEncryptionSettings(_ settings: AccountEncryptionSettings, owner: String, at: Int64) throws -> Bool {
        try db.execute(
            sql: """
                INSERT OR IGNORE INTO encryption_settings
                (user_record_name, salt, cost_n, block_size_r, parallelism_p, key_version, verifier, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                owner, settings.salt, settings.costN, settings.blockSizeR, settings.parallelismP,
                settings.keyVersion, settings.verifier, at,
            ])
        return db.changesCount > 0
    }

    func setKeyPair(_ keyPair: AccountKeyPair, owner: String) throws {
        try db.execute(
            sql: "UPDATE encryption_settings SET public_key = ?, wrapped_private_key = ? WHERE user_record_name = ?",
            arguments: [keyPair.publicKey, keyPair.wrappedPrivateKey, owner])
    }

    func replaceEncryptionSettings(_ settings: AccountEncryptionSettings, owner: String) throws {
        try db.execute(
            sql: """
                UPDATE encryption_settings SET salt = ?, cost_n = ?, block_size_r = ?, parallelism_p = ?,
                    key_version = ?, verifier = ?, public_key = ?, wrapped_private_key = ?
                WHERE user_record_name = ?
                """,
            arguments: [
                settings.salt, settings.costN, settings.blockSizeR, settings.parallelismP, settings.keyVersion,
                settings.verifier, settings.keyPair?.publicKey, settings.keyPair?.wrappedPrivateKey, owner,
            ])
    }

    func zoneKeys(owner: String) throws -> [String: RecordZone.EncryptionKey] {
        var keys: [String: RecordZone.EncryptionKey] = [:]
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT zone_name, key_version, wrapped_key FROM zone
                WHERE owner = ? AND deleted = 0 AND wrapped_key IS NOT NULL
                """, arguments: [owner])
        {
            keys[row["zone_name"]] = RecordZone.EncryptionKey(
                storedVersion: row["key_version"], wrapped: row["wrapped_key"])
        }
        return keys
    }

    func setZoneWrappedKey(_ wrappedKey: Data, owner: String, zoneName: String, seq: Int64, at: Int64) throws {
        try db.execute(
            sql: """
                UPDATE zone SET wrapped_key = ?, change_seq = ?, modified_at = ?
                WHERE owner = ? AND zone_name = ? AND deleted = 0
                """,
            arguments: [wrappedKey, seq, at, owner, zoneName])
    }

    func sharedSlots(user: String) throws -> [(zoneID: RecordZone.ID, keyVersion: Int)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT p.owner, p.zone_name, p.key_version FROM share_participant p
                JOIN zone z ON z.owner = p.owner AND z.zone_name = p.zone_name AND z.deleted = 0
                WHERE p.user_record_name = ? AND p.status = 'accepted' AND p.role != 'owner'
                    AND p.wrapped_key IS NOT NULL AND p.key_version IS NOT NULL
                """, arguments: [user]
        ).map { (zoneID: RecordZone.ID(zoneName: $0[1], ownerName: $0[0]), keyVersion: $0[2]) }
    }

    func setSharedSlotKey(_ key: RecordZone.EncryptionKey, user: String, zoneID: RecordZone.ID) throws {
        try db.execute(
            sql: """
                UPDATE share_participant SET key_version = ?, wrapped_key = ?
                WHERE owner = ? AND zone_name = ? AND user_record_name = ? AND status = 'accepted'
                    AND role != 'owner' AND wrapped_key IS NOT NULL
                """,
            arguments: [key.keyVersion, key.wrappedKey, zoneID.ownerName, zoneID.zoneName, user])
    }
}
