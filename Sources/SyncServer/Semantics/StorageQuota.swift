import Foundation
import SyncCore

/// The per-account storage quota's rule, the same for every store.
///
/// **What counts.** An account's usage is the bytes of the stored fields of its records: the length of
/// each live record's fields as stored (the wire's JSON with sorted keys, ``FieldCoding``), summed
/// over the account's live zones. Tombstones store no fields and count nothing. A participant's
/// writes into a shared zone count to the zone's owner, as in CloudKit. The stores keep the sum
/// per zone and per account, changed in each write's own transaction, so that reading it costs one row.
///
/// **What is refused.** A modification that would leave the account above its limit and makes it
/// larger is refused as a whole (nothing of it is stored); one that leaves usage the same or smaller
/// (deletes, smaller saves) always passes, even above the limit, so that a full account can free space.
public enum StorageQuota {
    /// How many bytes a modification adds: the fields of every row it writes less the stored fields
    /// those replace, by size (a row not in `storedBytes`, such as a share's tombstone, replaces
    /// nothing, so the growth is never understated).
    static func growth(of rows: [StoredRecord], replacing storedBytes: [RecordKey: Int64]) -> Int64 {
        rows.reduce(0) { sum, row in
            sum + Int64(row.fields.count) - (storedBytes[row.key] ?? 0)
        }
    }

    /// Throws `quotaExceeded` when growing `usage` by `growth` bytes would pass its limit.
    /// - Parameters:
    ///   - isOwner: whether the writer owns the account; a participant writing into a shared zone is
    ///     told that the owner's storage is full, without the owner's figures.
    static func check(growth: Int64, usage: StorageUsage, isOwner: Bool) throws {
        guard growth > 0, let limit = usage.limitBytes, usage.usedBytes + growth > limit else { return }
        throw exceeded(growth: growth, usage: usage, isOwner: isOwner)
    }

    /// The `quotaExceeded` error for a change of `growth` bytes refused at `usage`.
    static func exceeded(growth: Int64, usage: StorageUsage, isOwner: Bool) -> SyncError {
        guard isOwner else {
            return SyncError(
                .quotaExceeded,
                "the storage of the account that owns this zone is full, and these changes need \(ByteCount.describe(growth)) more; nothing was saved. Its owner can delete records to make room"
            )
        }
        var error = SyncError(
            .quotaExceeded,
            "this account's storage is full: \(ByteCount.describe(usage.usedBytes)) used of \(ByteCount.describe(usage.limitBytes ?? 0)), and these changes need \(ByteCount.describe(growth)) more; nothing was saved. Delete records you no longer need, or ask the server's operator for a larger quota"
        )
        error.quota = usage
        return error
    }
}
