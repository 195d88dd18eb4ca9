import SyncCore

/// The rules of an upload's bytes, the same for every store.
enum AssetUploadRules {
    static func noSuchUpload(_ id: String) -> SyncError {
        SyncError(
            .unknownItem,
            "there is no upload '\(id)'; it may have expired (uploads no record names are kept for a day): upload the asset again"
        )
    }

    /// Refuses bytes sent from `offset` to `asset` unless it stands there.
    static func checkAppend(_ asset: StoredAsset, at offset: Int64) throws {
        if asset.isComplete {
            throw SyncError(
                .constraintViolation,
                "upload '\(asset.id)' is complete (\(asset.size) bytes); name it in a record")
        }
        guard offset == asset.received else {
            throw SyncError(
                .constraintViolation,
                "upload '\(asset.id)' holds \(asset.received) of its \(asset.size) bytes, so the next request sends from byte \(asset.received), not \(offset); ask where it stands (GET) and go on from there"
            )
        }
    }

    static func tooManyBytes(_ asset: StoredAsset) -> SyncError {
        SyncError(
            .invalidArguments,
            "upload '\(asset.id)' has \(asset.size) bytes in all, and this request sends more than the \(asset.size - asset.received) it lacks; what fitted is kept"
        )
    }

    static func busy(_ id: String) -> SyncError {
        SyncError(
            .constraintViolation,
            "another request is sending the bytes of upload '\(id)' now; wait for it, then ask where the upload stands")
    }
}
