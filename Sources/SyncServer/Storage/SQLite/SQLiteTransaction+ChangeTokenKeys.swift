import Foundation
import GRDB
import SyncCore

/// The change-token keys' rows in SQLite's SQL (table `change_token_key`, schema version 7).
extension SQLiteTransaction {
    func changeTokenKeys() throws -> [ChangeTokenKey] {
        try Row.fetchAll(db, sql: "SELECT * FROM change_token_key ORDER BY id").map { row in
            ChangeTokenKey(
                id: row["id"], secret: row["secret"], createdAt: Date(millisecondsSince1970: row["created_at"]),
                expiresAt: (row["expires_at"] as Int64?).map(Date.init(millisecondsSince1970:)))
        }
    }

    func addFirstChangeTokenKey(secret: Data, at: Int64) throws {
        try db.execute(
            sql: "INSERT OR IGNORE INTO change_token_key (id, secret, created_at) VALUES (1, ?, ?)",
            arguments: [secret, at])
    }

    /// (The writer is held already.)
    func lockChangeTokenKeys() {}

    func expireChangeTokenKeys(at: Int64) throws {
        try db.execute(
            sql: "UPDATE change_token_key SET expires_at = ?1 WHERE expires_at IS NULL OR expires_at > ?1",
            arguments: [at])
    }

    func highestChangeTokenKeyID() throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM change_token_key") ?? 0
    }

    func insertChangeTokenKey(_ key: ChangeTokenKey) throws {
        try db.execute(
            sql: "INSERT INTO change_token_key (id, secret, created_at) VALUES (?, ?, ?)",
            arguments: [key.id, key.secret, key.createdAt.millisecondsSince1970])
    }
}
