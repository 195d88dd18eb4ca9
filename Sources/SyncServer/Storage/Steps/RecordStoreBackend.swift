import Foundation
import SyncCore

/// A store that runs the shared steps (``StoreTransaction``) in its own transactions: what
/// ``SQLiteRecordStore`` and ``PostgresRecordStore`` have in common. Their ``RecordStore`` write
/// paths are this protocol's extensions, written once; each backend adds its SQL (its
/// ``Transaction``) and its reads.
protocol RecordStoreBackend: RecordStore {
    associatedtype Transaction: StoreTransaction

    /// The storage quota of accounts without one of their own, in bytes; nil for none.
    var defaultQuotaBytes: Int64? { get }

    /// Runs `work` in one write transaction: committed when it returns, rolled back when it throws
    /// (its error rethrown as it is).
    func write<Result: Sendable>(_ work: @escaping @Sendable (Transaction) async throws -> Result) async throws
        -> Result

    /// Runs `work`, which reads with one statement, outside a transaction where the backend can (one
    /// statement sees one snapshot by itself): a round trip each way fewer than ``read(_:)``.
    func readStatement<Result: Sendable>(_ work: @escaping @Sendable (Transaction) async throws -> Result)
        async throws -> Result

    /// Runs `work` in one consistent, read-only view of the store.
    func read<Result: Sendable>(_ work: @escaping @Sendable (Transaction) async throws -> Result) async throws
        -> Result
}

extension StoreTransaction {
    /// The account's usage and limit, with `defaultQuotaBytes` for an account without a quota of its own.
    func storageUsage(owner: String, defaultQuotaBytes: Int64?) async throws -> StorageUsage {
        let (used, quota) = try await usage(owner: owner)
        return StorageUsage(
            usedBytes: used, limitBytes: AccountQuota(stored: quota).limit(defaultBytes: defaultQuotaBytes))
    }
}
