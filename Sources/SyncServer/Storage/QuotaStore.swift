import Foundation
import SyncCore

/// Where the server keeps each account's storage usage and quota, and removes the records of deleted zones.
///
/// Usage is counted by the stores in every write's own transaction (see ``StorageQuota`` for what
/// counts); an account without a quota of its own has the store's default (`defaultQuotaBytes`,
/// given when the store is opened).
public protocol QuotaStore {
    /// The account's usage and its limit (its own quota, or the store's default).
    func storageUsage(owner: String) async throws -> StorageUsage
    /// Every account's usage and quota setting, sorted by username; only the account named
    /// `username` (compared case-insensitively) when one is given.
    func accountStorage(username: String?) async throws -> [AccountStorage]
    /// Sets the quota of the account named `username` (compared case-insensitively); returns the
    /// account as it is now, or nil when there is no such account.
    func setQuota(username: String, _ quota: AccountQuota) async throws -> AccountStorage?
    /// Removes the records left in deleted zones of `owner` named in `zoneNames` (all of the owner's
    /// deleted zones for nil, and every owner's when `owner` is nil), a bounded number of rows per
    /// transaction so that other writers go between. Returns how many rows it removed.
    ///
    /// Deleting a zone (``RecordStore/modifyZones(owner:saves:deletes:now:)``,
    /// ``RecordStore/resetEncryptedData(owner:now:)``) turns it into a tombstone at once, and its
    /// usage stops counting then; its records are unreachable from that moment and removed here.
    @discardableResult
    func purgeDeletedZones(owner: String?, zoneNames: [String]?) async throws -> Int
}

/// An account's quota setting.
public enum AccountQuota: Sendable, Hashable {
    /// The server's default (`--quota-bytes`).
    case serverDefault
    /// No limit.
    case unlimited
    /// At most this many bytes.
    case bytes(Int64)

    /// As stored: nil for the default, a negative number for no limit.
    var stored: Int64? {
        switch self {
        case .serverDefault: nil
        case .unlimited: -1
        case .bytes(let bytes): bytes
        }
    }

    init(stored: Int64?) {
        switch stored {
        case nil: self = .serverDefault
        case let bytes? where bytes < 0: self = .unlimited
        case let bytes?: self = .bytes(bytes)
        }
    }

    /// The limit it gives with `defaultBytes` as the server's default (nil: none).
    public func limit(defaultBytes: Int64?) -> Int64? {
        switch self {
        case .serverDefault: defaultBytes
        case .unlimited: nil
        case .bytes(let bytes): bytes
        }
    }
}

/// An account's storage, as operators see it.
public struct AccountStorage: Sendable, Hashable {
    public var userRecordName: String
    public var username: String
    public var usedBytes: Int64
    public var quota: AccountQuota

    public init(userRecordName: String, username: String, usedBytes: Int64, quota: AccountQuota) {
        self.userRecordName = userRecordName
        self.username = username
        self.usedBytes = usedBytes
        self.quota = quota
    }
}

/// How many record rows of deleted zones one transaction removes: small enough that another
/// account's write waits for at most one such transaction (a few milliseconds), large enough that
/// 100,000 records take a hundred transactions, not thousands.
let deletedZonePurgeChunk = 1_000
