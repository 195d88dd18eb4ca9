import Foundation
import PostgresNIO
import SyncCore

/// The change-token keys' rows in PostgreSQL's SQL (table `change_token_key`, schema version 7).
extension PostgresTransaction {
    func changeTokenKeys() async throws -> [ChangeTokenKey] {
        try await query("SELECT id, secret, created_at, expires_at FROM change_token_key ORDER BY id")
            .decode((Int64, Data, Int64, Int64?).self).map { id, secret, created, expires in
                ChangeTokenKey(
                    id: id, secret: secret, createdAt: Date(millisecondsSince1970: created),
                    expiresAt: expires.map(Date.init(millisecondsSince1970:)))
            }
    }

    func addFirstChangeTokenKey(secret: Data, at: Int64) async throws {
        try await query(
            """
            INSERT INTO change_token_key (id, secret, created_at) VALUES (1, \(secret), \(at))
            ON CONFLICT (id) DO NOTHING
            """)
    }

    func lockChangeTokenKeys() async throws {
        try await query("LOCK TABLE change_token_key IN EXCLUSIVE MODE")
    }

    func expireChangeTokenKeys(at: Int64) async throws {
        try await query(
            "UPDATE change_token_key SET expires_at = \(at) WHERE expires_at IS NULL OR expires_at > \(at)")
    }

    func highestChangeTokenKeyID() async throws -> Int64 {
        try await query("SELECT COALESCE(MAX(id), 0)::bigint FROM change_token_key").decode(Int64.self).first ?? 0
    }

    func insertChangeTokenKey(_ key: ChangeTokenKey) async throws {
        try await query(
            """
            INSERT INTO change_token_key (id, secret, created_at)
            VALUES (\(key.id), \(key.secret), \(key.createdAt.millisecondsSince1970))
            """)
    }
}
