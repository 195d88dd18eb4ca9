import Foundation
import GRDB
import NIOCore
import SyncCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Assets on SQLite: a row each in the database, the bytes in a file each beside it
/// (`<database>-assets/<id>`, 0600 in a 0700 directory).
///
/// An upload's bytes go to `<id>.part`, flushed to disk before the row says how many it holds; the
/// last of them renames it to `<id>` (the directory flushed too). A crash between the two leaves a
/// complete row with a `.part` file, which reads the same. One server process uses the file (its
/// storage lock), so one request at a time appends to an upload: the store keeps which do.
extension SQLiteRecordStore {
    /// The directory of the asset files.
    var assetsDirectory: String { pool.path + "-assets" }

    private func assetPath(_ id: String, complete: Bool) -> String {
        "\(assetsDirectory)/\(id)\(complete ? "" : ".part")"
    }

    public func appendToAsset<Bytes: AsyncSequence>(id: String, at offset: Int64, _ bytes: Bytes, now: Date)
        async throws -> StoredAsset where Bytes.Element == ByteBuffer
    {
        guard appendingAssets.withLock({ $0.insert(id).inserted }) else { throw AssetUploadRules.busy(id) }
        defer { appendingAssets.withLock { _ = $0.remove(id) } }
        guard var asset = try await asset(id: id) else { throw AssetUploadRules.noSuchUpload(id) }
        try AssetUploadRules.checkAppend(asset, at: offset)
        try AssetFile.makeDirectory(assetsDirectory)
        let file = try AssetFile(appendingTo: assetPath(id, complete: false))
        var received = asset.received
        var failure: (any Error)?
        do {
            // A file shorter than the row says (lost from the disk) resumes from what it holds.
            received = try await file.truncate(toAtMost: received)
            if received == asset.received {
                for try await buffer in bytes {
                    let fits = Int(min(Int64(buffer.readableBytes), asset.size - received))
                    try await file.write(buffer.getSlice(at: buffer.readerIndex, length: fits)!)
                    received += Int64(fits)
                    if fits < buffer.readableBytes { throw AssetUploadRules.tooManyBytes(asset) }
                }
            }
        } catch {
            failure = error
        }
        try await file.synchronizeAndClose()
        if received != asset.received {
            let stored = received
            try await pool.write { db in
                try db.execute(sql: "UPDATE asset SET received = ? WHERE id = ?", arguments: [stored, id])
            }
            let wasShort = received < asset.received
            asset.received = received
            if wasShort {
                throw SyncError(
                    .constraintViolation,
                    "upload '\(id)' holds only \(received) of its bytes on the server now; send from byte \(received)")
            }
        }
        if asset.isComplete {
            try AssetFile.rename(assetPath(id, complete: false), to: assetPath(id, complete: true), in: assetsDirectory)
        }
        if let failure { throw failure }
        return asset
    }

    public func readAsset(id: String, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void)
        async throws
    {
        let complete = assetPath(id, complete: true)
        let path = FileManager.default.fileExists(atPath: complete) ? complete : assetPath(id, complete: false)
        try await AssetFile.read(path, range: range, into: write)
    }

    public func collectAssets(detachedBefore: Date, uploadsBefore: Date, now: Date) async throws -> AssetCollection {
        let busy = appendingAssets.withLock { $0 }
        let removed = try await pool.write { db -> [(id: String, size: Int64)] in
            try db.execute(
                sql: """
                    UPDATE asset SET detached_at = ? WHERE detached_at IS NULL AND owner IS NOT NULL AND NOT EXISTS (
                        SELECT 1 FROM record WHERE record.owner = asset.owner AND record.zone_name = asset.zone_name
                            AND record.record_name = asset.record_name AND record.deleted = 0)
                    """, arguments: [now.millisecondsSince1970])
            let doomed = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, uploader, size FROM asset
                    WHERE detached_at < ? OR (owner IS NULL AND created_at < ?)
                    """,
                arguments: [detachedBefore.millisecondsSince1970, uploadsBefore.millisecondsSince1970]
            ).filter { !busy.contains($0["id"]) }
            for row in doomed {
                try db.execute(sql: "DELETE FROM asset WHERE id = ?", arguments: [row["id"] as String])
                try db.execute(
                    sql: "UPDATE account SET used_bytes = MAX(0, used_bytes - ?) WHERE user_record_name = ?",
                    arguments: [row["size"] as Int64, row["uploader"] as String])
            }
            return doomed.map { (id: $0["id"], size: $0["size"]) }
        }
        for asset in removed {
            unlink(assetPath(asset.id, complete: true))
            unlink(assetPath(asset.id, complete: false))
        }
        return AssetCollection(assets: removed.count, bytes: removed.reduce(0) { $0 + $1.size })
    }
}
