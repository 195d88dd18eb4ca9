import Foundation
import GRDB
import SyncCore

/// The account's encryption settings and the reset of encrypted data. The server keeps only what
/// devices give it to share among themselves; nothing here can open an encrypted value.
extension SQLiteRecordStore {
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

    private static func encryptionSettings(_ db: Database, owner: String) throws -> AccountEncryptionSettings? {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT * FROM encryption_settings WHERE user_record_name = ?", arguments: [owner])
        else { return nil }
        return AccountEncryptionSettings(
            salt: row["salt"], costN: row["cost_n"], blockSizeR: row["block_size_r"],
            parallelismP: row["parallelism_p"], keyVersion: row["key_version"], verifier: row["verifier"])
    }
}
