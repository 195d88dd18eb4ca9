import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Quotas on PostgreSQL: the operator's reads and settings (schema version 6). Usage is
/// counted by the shared steps (`StoreTransaction+Usage.swift`).
extension PostgresRecordStore {
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
