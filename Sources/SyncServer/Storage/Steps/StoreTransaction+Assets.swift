import Foundation
import SyncCore

/// Assets' rows, once for every backend (their bytes are each backend's own).
extension RecordStoreBackend {
    public func createAssetUpload(id: String, uploader: String, size: Int64, now: Date) async throws {
        let defaultQuotaBytes = self.defaultQuotaBytes
        try await write { transaction in
            _ = try await transaction.lockAccount(owner: uploader)
            let usage = try await transaction.storageUsage(owner: uploader, defaultQuotaBytes: defaultQuotaBytes)
            try StorageQuota.check(growth: size, usage: usage, isOwner: true)
            try await transaction.insertAsset(id: id, uploader: uploader, size: size, at: now.millisecondsSince1970)
            try await transaction.addUsage(owner: uploader, bytes: size)
        }
    }

    public func asset(id: String) async throws -> StoredAsset? {
        try await readStatement { try await $0.asset(id: id, forUpdate: false) }
    }

    public func attachAssets(_ ids: [String], to place: AssetPlace, now: Date) async throws {
        try await write { try await $0.attachAssets(ids, to: place, at: now.millisecondsSince1970) }
    }
}
