import Foundation
import GRDB
import SyncCore

/// Quotas on SQLite: the schema (migration v9) and the operator's reads and settings. Usage is
/// counted by the shared steps (`StoreTransaction+Usage.swift`).
extension SQLiteRecordStore {
    /// The schema of migration v9, and the usage of what was stored before it.
    static let quotaMigration = """
        ALTER TABLE account ADD COLUMN used_bytes INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE account ADD COLUMN quota_bytes INTEGER;
        ALTER TABLE zone ADD COLUMN used_bytes INTEGER NOT NULL DEFAULT 0;
        UPDATE zone SET used_bytes = COALESCE((SELECT SUM(length(CAST(fields AS BLOB))) FROM record
            WHERE record.owner = zone.owner AND record.zone_name = zone.zone_name), 0)
        WHERE deleted = 0;
        UPDATE account SET used_bytes = COALESCE((SELECT SUM(used_bytes) FROM zone
            WHERE zone.owner = account.user_record_name AND deleted = 0), 0);
        """

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
