import Foundation
import PostgresNIO
import SyncCore

/// The account's encryption settings and the reset of encrypted data, as ``SQLiteRecordStore`` keeps
/// them. The server keeps only what devices give it to share among themselves.
extension PostgresRecordStore {
    /// Migration 8: the account's key pair beside its settings (a reset, which deletes the
    /// settings, deletes it too), and each share participant's shared key: the zone's keys the
    /// owner wrapped to the participant's public key. Existing rows have neither.
    static let keyPairMigration = PostgresSchema.Migration(
        version: 8, name: "account key pairs, participants' shared keys",
        statements: [
            "ALTER TABLE encryption_settings ADD COLUMN public_key BYTEA, ADD COLUMN wrapped_private_key BYTEA",
            "ALTER TABLE share_participant ADD COLUMN shared_key_version BIGINT, ADD COLUMN shared_key BYTEA",
        ])

    public func encryptionSettings(owner: String) async throws -> AccountEncryptionSettings? {
        try await withConnection { connection in
            try await Self.encryptionSettings(connection, owner: owner, logger: self.logger)
        }
    }

    public func createEncryptionSettings(owner: String, _ settings: AccountEncryptionSettings, now: Date)
        async throws -> AccountEncryptionSettings?
    {
        // Of two devices setting up at once, one stores and the other is told: the insert does
        // nothing when a row exists, and the row is then read in the same transaction.
        try await transaction { connection in
            let inserted = try await connection.query(
                """
                INSERT INTO encryption_settings
                (user_record_name, salt, cost_n, block_size_r, parallelism_p, key_version, verifier, created_at)
                VALUES (\(owner), \(settings.salt), \(Int64(settings.costN)), \(Int64(settings.blockSizeR)),
                    \(Int64(settings.parallelismP)), \(Int64(settings.keyVersion)), \(settings.verifier),
                    \(now.millisecondsSince1970))
                ON CONFLICT (user_record_name) DO NOTHING
                RETURNING 1
                """, logger: self.logger
            ).collect()
            if !inserted.isEmpty { return nil }
            return try await Self.encryptionSettings(connection, owner: owner, logger: self.logger)
        }
    }

    public func resetEncryptedData(owner: String, now: Date) async throws -> [String] {
        try await transaction { connection in
            var seq = try await Self.lockAccount(connection, owner: owner, logger: self.logger).current
            try await connection.query(
                "DELETE FROM encryption_settings WHERE user_record_name = \(owner)", logger: self.logger)
            var names: [String] = []
            for try await name in try await connection.query(
                """
                SELECT zone_name FROM zone WHERE owner = \(owner) AND NOT deleted AND wrapped_key IS NOT NULL
                ORDER BY zone_name COLLATE "C"
                """, logger: self.logger
            ).decode(String.self) {
                names.append(name)
            }
            for name in names {
                seq += 1
                try await Self.deleteZone(
                    connection, owner: owner, zoneName: name, reason: .encryptedDataReset, seq: seq, now: now,
                    logger: self.logger)
            }
            try await Self.setChangeSeq(connection, owner: owner, seq: seq, logger: self.logger)
            return names
        }
    }

    public func createKeyPair(owner: String, _ keyPair: AccountKeyPair) async throws -> KeyPairCreation {
        // The settings row is locked: of two devices publishing at once, one stores and the other
        // is told.
        try await transaction { connection in
            guard
                let settings = try await Self.encryptionSettings(
                    connection, owner: owner, forUpdate: true, logger: self.logger)
            else { return .noSettings }
            if settings.keyPair != nil { return .exists(settings) }
            try await connection.query(
                """
                UPDATE encryption_settings
                SET public_key = \(keyPair.publicKey), wrapped_private_key = \(keyPair.wrappedPrivateKey)
                WHERE user_record_name = \(owner)
                """, logger: self.logger)
            return .created
        }
    }

    public func publicKey(owner: String) async throws -> Data? {
        try await encryptionSettings(owner: owner)?.keyPair?.publicKey
    }

    static func encryptionSettings(
        _ connection: PostgresConnection, owner: String, forUpdate: Bool = false, logger: Logger
    ) async throws -> AccountEncryptionSettings? {
        for try await (salt, costN, blockSizeR, parallelismP, keyVersion, verifier, publicKey, wrappedPrivateKey)
            in try await connection.query(
                """
                SELECT salt, cost_n, block_size_r, parallelism_p, key_version, verifier, public_key,
                    wrapped_private_key
                FROM encryption_settings WHERE user_record_name = \(owner) \(unescaped: forUpdate ? "FOR UPDATE" : "")
                """, logger: logger
            ).decode((Data, Int64, Int64, Int64, Int64, Data, Data?, Data?).self)
        {
            return AccountEncryptionSettings(
                salt: salt, costN: Int(costN), blockSizeR: Int(blockSizeR), parallelismP: Int(parallelismP),
                keyVersion: Int(keyVersion), verifier: verifier,
                keyPair: AccountKeyPair(storedPublicKey: publicKey, wrappedPrivateKey: wrappedPrivateKey))
        }
        return nil
    }
}
