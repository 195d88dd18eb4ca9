import Foundation
import GRDB
import SyncCore

/// Quotas on SQLite: the operator's reads and settings (schema version 6). Usage is
/// counted by the shared steps (`StoreTransaction+Usage.swift`).
extension SQLiteRecordStore {
    public func accountStorage(username: String?) async throws -> [AccountStorage] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT user_record_name, username, used_bytes, quota_bytes FROM account
                    WHERE ? IS NULL OR username = ? ORDER BY username
                    """, arguments: [username, username]
            ).map(Self.accountStorage(from:))
        }
    }

    public func setQuota(username: String, _ quota: AccountQuota) async throws -> AccountStorage? {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE account SET quota_bytes = ? WHERE username = ?", arguments: [quota.stored, username])
            return try Row.fetchOne(
                db, sql: "SELECT user_record_name, username, used_bytes, quota_bytes FROM account WHERE username = ?",
                arguments: [username]
            ).map(Self.accountStorage(from:))
        }
    }

    private static func accountStorage(from row: Row) -> AccountStorage {
        AccountStorage(
            userRecordName: row["user_record_name"], username: row["username"], usedBytes: row["used_bytes"],
            quota: AccountQuota(stored: row["quota_bytes"]))
    }
}
