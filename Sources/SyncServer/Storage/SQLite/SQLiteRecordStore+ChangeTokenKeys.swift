import Foundation
import GRDB
import SyncCore

/// The change-token keys in the storage file (table `change_token_key`, migration v10).
extension SQLiteRecordStore {
    static let changeTokenKeyTable = """
        CREATE TABLE change_token_key (
            id INTEGER PRIMARY KEY,
            secret BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER
        )
        """

    public func changeTokenKeys(now: Date) async throws -> [ChangeTokenKey] {
        let keys = try await pool.read(Self.changeTokenKeys)
        if !keys.isEmpty { return keys }
        return try await pool.write { db in
            // The first key is number 1: a second writer finds it and adds nothing.
            try db.execute(
                sql: "INSERT OR IGNORE INTO change_token_key (id, secret, created_at) VALUES (1, ?, ?)",
                arguments: [ChangeTokenKey.randomSecret(), now.millisecondsSince1970])
            return try Self.changeTokenKeys(db)
        }
    }

    public func rotateChangeTokenKey(now: Date, previousValidUntil: Date) async throws -> ChangeTokenKey {
        try await pool.write { db in
            let until = previousValidUntil.millisecondsSince1970
            try db.execute(
                sql: "UPDATE change_token_key SET expires_at = ? WHERE expires_at IS NULL OR expires_at > ?",
                arguments: [until, until])
            let id = (try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM change_token_key") ?? 0) + 1
            let key = ChangeTokenKey(
                id: id, secret: ChangeTokenKey.randomSecret(), createdAt: now, expiresAt: nil)
            try db.execute(
                sql: "INSERT INTO change_token_key (id, secret, created_at) VALUES (?, ?, ?)",
                arguments: [key.id, key.secret, now.millisecondsSince1970])
            return key
        }
    }

    private static func changeTokenKeys(_ db: Database) throws -> [ChangeTokenKey] {
        try Row.fetchAll(db, sql: "SELECT * FROM change_token_key ORDER BY id").map { row in
            ChangeTokenKey(
                id: row["id"], secret: row["secret"], createdAt: Date(millisecondsSince1970: row["created_at"]),
                expiresAt: (row["expires_at"] as Int64?).map(Date.init(millisecondsSince1970:)))
        }
    }
}
