import Foundation
import GRDB
import SyncCore

/// The account's encryption settings and the reset of encrypted data. The server keeps only what
/// devices give it to share among themselves; nothing here can open an encrypted value.
extension SQLiteRecordStore {
    /// Migration v11: the account's key pair beside its settings (a reset, which deletes the
    /// settings, deletes it too), and each share participant's shared key: the zone's keys the
    /// owner wrapped to the participant's public key. Existing rows have neither.
    static let keyPairMigration = """
        ALTER TABLE encryption_settings ADD COLUMN public_key BLOB;
        ALTER TABLE encryption_settings ADD COLUMN wrapped_private_key BLOB;
        ALTER TABLE share_participant ADD COLUMN shared_key_version INTEGER;
        ALTER TABLE share_participant ADD COLUMN shared_key BLOB;
        """

    public func encryptionSettings(owner: String) async throws -> AccountEncryptionSettings? {
        try await pool.read { db in try Self.encryptionSettings(db, owner: owner) }
    }

    public func createEncryptionSettings(owner: String, _ settings: AccountEncryptionSettings, now: Date)
        async throws -> AccountEncryptionSettings?
    {
        // One transaction: of two devices setting up at once, one stores and the other is told.
        try await pool.write { db in
            if let existing = try Self.encryptionSettings(db, owner: owner) { return existing }
            try db.execute(
                sql: """
                    INSERT INTO encryption_settings
                    (user_record_name, salt, cost_n, block_size_r, parallelism_p, key_version, verifier, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    owner, settings.salt, settings.costN, settings.blockSizeR, settings.parallelismP,
                    settings.keyVersion, settings.verifier, now.millisecondsSince1970,
                ])
            return nil
        }
    }

    public func resetEncryptedData(owner: String, now: Date) async throws -> [String] {
        try await pool.write { db in
            var seq = try Self.changeSeq(db, owner: owner)
            try db.execute(sql: "DELETE FROM encryption_settings WHERE user_record_name = ?", arguments: [owner])
            let names = try String.fetchAll(
                db,
                sql: """
                    SELECT zone_name FROM zone WHERE owner = ? AND deleted = 0 AND wrapped_key IS NOT NULL
                    ORDER BY zone_name
                    """, arguments: [owner])
            for name in names {
                seq += 1
                try Self.deleteZone(db, owner: owner, zoneName: name, reason: .encryptedDataReset, seq: seq, now: now)
            }
            try Self.setChangeSeq(db, owner: owner, seq: seq)
            return names
        }
    }

    public func createKeyPair(owner: String, _ keyPair: AccountKeyPair) async throws -> KeyPairCreation {
        // One transaction: of two devices publishing at once, one stores and the other is told.
        try await pool.write { db in
            guard let settings = try Self.encryptionSettings(db, owner: owner) else { return .noSettings }
            if settings.keyPair != nil { return .exists(settings) }
            try db.execute(
                sql: """
                    UPDATE encryption_settings SET public_key = ?, wrapped_private_key = ?
                    WHERE user_record_name = ?
                    """,
                arguments: [keyPair.publicKey, keyPair.wrappedPrivateKey, owner])
            return .created
        }
    }

    public func publicKey(owner: String) async throws -> Data? {
        try await pool.read { db in try Self.encryptionSettings(db, owner: owner)?.keyPair?.publicKey }
    }

    static func encryptionSettings(_ db: Database, owner: String) throws -> AccountEncryptionSettings? {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT * FROM encryption_settings WHERE user_record_name = ?", arguments: [owner])
        else { return nil }
        return AccountEncryptionSettings(
            salt: row["salt"], costN: row["cost_n"], blockSizeR: row["block_size_r"],
            parallelismP: row["parallelism_p"], keyVersion: row["key_version"], verifier: row["verifier"],
            keyPair: AccountKeyPair(storedPublicKey: row["public_key"], wrappedPrivateKey: row["wrapped_private_key"]))
    }
}
