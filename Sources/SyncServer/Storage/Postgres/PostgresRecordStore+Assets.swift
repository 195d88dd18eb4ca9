import Foundation
import Logging
import NIOCore
import PostgresNIO
import SyncCore

/// Assets on PostgreSQL: a row each, and their bytes in chunks of up to ``chunkBytes`` in the database
/// itself, so that every instance serves every asset and a backup holds them.
///
/// An upload's row is locked while a chunk is added (`FOR UPDATE`) and must still stand where the
/// chunk begins, so that two instances appending to one upload at once cannot both write a byte.
extension PostgresRecordStore {
    /// Bytes per stored chunk.
    static let assetChunkBytes = 256 * 1024

    public func appendToAsset<Bytes: AsyncSequence>(id: String, at offset: Int64, _ bytes: Bytes, now: Date)
        async throws -> StoredAsset where Bytes.Element == ByteBuffer
    {
        guard var asset = try await asset(id: id) else { throw AssetUploadRules.noSuchUpload(id) }
        try AssetUploadRules.checkAppend(asset, at: offset)
        var pending = ByteBuffer()
        var failure: (any Error)?
        do {
            for try await buffer in bytes {
                let fits = Int(
                    min(Int64(buffer.readableBytes), asset.size - asset.received - Int64(pending.readableBytes)))
                var slice = buffer.getSlice(at: buffer.readerIndex, length: fits)!
                pending.writeBuffer(&slice)
                while pending.readableBytes >= Self.assetChunkBytes {
                    let chunk = pending.readSlice(length: Self.assetChunkBytes)!
                    asset = try await storeChunk(chunk, of: asset)
                }
                if fits < buffer.readableBytes { throw AssetUploadRules.tooManyBytes(asset) }
            }
        } catch {
            failure = error
        }
        if pending.readableBytes > 0 {
            asset = try await storeChunk(pending, of: asset)
        }
        if let failure { throw failure }
        return asset
    }

    /// Adds `chunk` at the end of `asset`, which must stand where the store last left it.
    private func storeChunk(_ chunk: ByteBuffer, of asset: StoredAsset) async throws -> StoredAsset {
        try await transaction { connection in
            guard
                let current = try await PostgresTransaction(connection: connection, logger: self.logger).asset(
                    id: asset.id, forUpdate: true)
            else {
                throw AssetUploadRules.noSuchUpload(asset.id)
            }
            guard current.received == asset.received else { throw AssetUploadRules.busy(asset.id) }
            let received = current.received + Int64(chunk.readableBytes)
            try await connection.query(
                "INSERT INTO asset_chunk (asset_id, start_at, bytes) VALUES (\(asset.id), \(current.received), \(chunk))",
                logger: self.logger)
            try await connection.query(
                "UPDATE asset SET received = \(received) WHERE id = \(asset.id)", logger: self.logger)
            var stored = current
            stored.received = received
            return stored
        }
    }

    public func readAsset(id: String, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void)
        async throws
    {
        var position = range.lowerBound
        while position < range.upperBound {
            // A few chunks per query: the memory held stays a few chunks, whatever the asset's size.
            let from = position
            let rows = try await withConnection { connection in
                try await connection.query(
                    """
                    SELECT start_at, bytes FROM asset_chunk
                    WHERE asset_id = \(id) AND start_at + length(bytes) > \(from) AND start_at < \(range.upperBound)
                    ORDER BY start_at LIMIT 4
                    """, logger: self.logger
                ).collect()
            }
            guard !rows.isEmpty else {
                throw SyncError(
                    .internalError,
                    "asset '\(id)' ends at byte \(position) in the database, short of its size; its operator should check the database"
                )
            }
            for row in rows {
                let (start, bytes) = try row.decode((Int64, ByteBuffer).self)
                let from = Int(max(0, position - start))
                let to = Int(min(Int64(bytes.readableBytes), range.upperBound - start))
                guard start <= position, from < to else {
                    throw SyncError(
                        .internalError,
                        "asset '\(id)' has a gap at byte \(position) in the database; its operator should check the database"
                    )
                }
                try await write(bytes.getSlice(at: bytes.readerIndex + from, length: to - from)!)
                position = start + Int64(to)
            }
        }
    }

    public func collectAssets(detachedBefore: Date, uploadsBefore: Date, now: Date) async throws -> AssetCollection {
        try await transaction { connection in
            try await connection.query(
                """
                UPDATE asset SET detached_at = \(now.millisecondsSince1970)
                WHERE detached_at IS NULL AND owner IS NOT NULL AND NOT EXISTS (
                    SELECT 1 FROM record WHERE record.owner = asset.owner AND record.zone_name = asset.zone_name
                        AND record.record_name = asset.record_name AND NOT record.deleted)
                """, logger: self.logger)
            var collection = AssetCollection()
            for try await (uploader, size) in try await connection.query(
                """
                DELETE FROM asset
                WHERE detached_at < \(detachedBefore.millisecondsSince1970)
                    OR (owner IS NULL AND created_at < \(uploadsBefore.millisecondsSince1970))
                RETURNING uploader, size
                """, logger: self.logger
            ).decode((String, Int64).self) {
                collection.assets += 1
                collection.bytes += size
                try await connection.query(
                    "UPDATE account SET used_bytes = GREATEST(0, used_bytes - \(size)) WHERE user_record_name = \(uploader)",
                    logger: self.logger)
            }
            return collection
        }
    }
}
