import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Quotas on PostgreSQL: the schema (migration 6) and the operator's reads and settings. Usage is
/// counted by the shared steps (`StoreTransaction+Usage.swift`).
extension PostgresRecordStore {
    /// The statements of migration 6: the columns, and the usage of what was stored before it.
    static let quotaMigration = [
        "ALTER TABLE account ADD COLUMN used_bytes BIGINT NOT NULL DEFAULT 0, ADD COLUMN quota_bytes BIGINT",
        "ALTER TABLE zone ADD COLUMN used_bytes BIGINT NOT NULL DEFAULT 0",
        """
        UPDATE zone z SET used_bytes = s.bytes
        FROM (SELECT owner, zone_name, SUM(octet_length(fields)) AS bytes FROM record GROUP BY owner, zone_name) s
        WHERE z.owner = s.owner AND z.zone_name = s.zone_name AND NOT z.deleted
        """,
        """
        UPDATE account a SET used_bytes = s.bytes
        FROM (SELECT owner, SUM(used_bytes) AS bytes FROM zone WHERE NOT deleted GROUP BY owner) s
        WHERE a.user_record_name = s.owner
        """,
    ]

    public func accountStorage(username: String?) async throws -> [AccountStorage] {
        let folded = username.map(Self.folded)
        var accounts: [AccountStorage] = []
        for (name, username, used, quota) in try await query(
            """
            SELECT user_record_name, username, used_bytes, quota_bytes FROM account
            WHERE \(folded)::text IS NULL OR username_folded = \(folded) ORDER BY username_folded COLLATE "C"
            """, logger: logger
        ).decode((String, String, Int64, Int64?).self) {
            accounts.append(
                AccountStorage(
                    userRecordName: name, username: username, usedBytes: used, quota: AccountQuota(stored: quota)))
        }
        return accounts
    }

    public func setQuota(username: String, _ quota: AccountQuota) async throws -> AccountStorage? {
        for (name, username, used, stored) in try await query(
            """
            UPDATE account SET quota_bytes = \(quota.stored) WHERE username_folded = \(Self.folded(username))
            RETURNING user_record_name, username, used_bytes, quota_bytes
            """, logger: logger
        ).decode((String, String, Int64, Int64?).self) {
            return AccountStorage(
                userRecordName: name, username: username, usedBytes: used, quota: AccountQuota(stored: stored))
        }
        return nil
    }
}
