import Foundation
import PostgresNIO
import SyncCore

/// The change-token keys in the database (table `change_token_key`, migration 7), shared by every
/// instance that serves it.
extension PostgresRecordStore {
    static let changeTokenKeyTable = """
        CREATE TABLE change_token_key (
            id BIGINT PRIMARY KEY,
            secret BYTEA NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT
        )
        """

    public func changeTokenKeys(now: Date) async throws -> [ChangeTokenKey] {
        try await withConnection { connection in
            let keys = try await Self.changeTokenKeys(connection, logger: self.logger)
            if !keys.isEmpty { return keys }
            // Of several instances starting at once, each tries to add key number 1; one does, and
            // all read that one.
            try await connection.query(
                """
                INSERT INTO change_token_key (id, secret, created_at)
                VALUES (1, \(ChangeTokenKey.randomSecret()), \(now.millisecondsSince1970))
                ON CONFLICT (id) DO NOTHING
                """, logger: self.logger)
            return try await Self.changeTokenKeys(connection, logger: self.logger)
        }
    }

    public func rotateChangeTokenKey(now: Date, previousValidUntil: Date) async throws -> ChangeTokenKey {
        try await transaction { connection in
            // Two rotations at once take turns: each numbers its key after every other.
            try await connection.query("LOCK TABLE change_token_key IN EXCLUSIVE MODE", logger: self.logger)
            let until = previousValidUntil.millisecondsSince1970
            try await connection.query(
                "UPDATE change_token_key SET expires_at = \(until) WHERE expires_at IS NULL OR expires_at > \(until)",
                logger: self.logger)
            var id: Int64 = 1
            for try await highest in try await connection.query(
                "SELECT COALESCE(MAX(id), 0) + 1 FROM change_token_key", logger: self.logger
            ).decode(Int64.self) {
                id = highest
            }
            let key = ChangeTokenKey(id: id, secret: ChangeTokenKey.randomSecret(), createdAt: now, expiresAt: nil)
            try await connection.query(
                """
                INSERT INTO change_token_key (id, secret, created_at)
                VALUES (\(key.id), \(key.secret), \(now.millisecondsSince1970))
                """, logger: self.logger)
            return key
        }
    }

    private static func changeTokenKeys(_ connection: PostgresConnection, logger: Logger) async throws
        -> [ChangeTokenKey]
    {
        var keys: [ChangeTokenKey] = []
        for try await (id, secret, created, expires) in try await connection.query(
            "SELECT id, secret, created_at, expires_at FROM change_token_key ORDER BY id", logger: logger
        ).decode((Int64, Data, Int64, Int64?).self) {
            keys.append(
                ChangeTokenKey(
                    id: id, secret: secret, createdAt: Date(millisecondsSince1970: created),
                    expiresAt: expires.map(Date.init(millisecondsSince1970:))))
        }
        return keys
    }
}
