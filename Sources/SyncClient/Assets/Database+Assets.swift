import Foundation
import NIOCore
import NIOHTTP1
import SyncCore
import SyncCrypto

/// Assets between this device and the server: a save's new assets uploaded before its records
/// (encrypted when the database has a keyring), and an asset's content downloaded on demand into the
/// ``AssetCache``.
extension Database {
    /// `values` with every new asset (``Asset/init(fileURL:)``) uploaded and named by its upload, each
    /// record's uploads made side by side with the others'. A record whose file cannot be read fails alone,
    /// with `invalidArguments` naming the file; a network failure throws.
    package func uploadingAssets(_ values: [RecordValue]) async throws -> [(RecordValue, SyncError?)] {
        guard values.contains(where: { $0.fields.values.contains(where: \.namesPendingAsset) }) else {
            return values.map { ($0, nil) }
        }
        let limits = try await DatabaseClient(database: self).limits()
        return try await ConcurrentMap.map(values) { value in
            var value = value
            do {
                for key in value.fields.keys.sorted() where value.fields[key]!.namesPendingAsset {
                    value[key] = try await value.fields[key]!.mappingAssetsAsync({ reference in
                        guard let key = reference.key, case .pending(let file) = LocalAssetKey(key) else {
                            return reference
                        }
                        return try await self.upload(file, limits: limits)
                    })
                }
                return (value, nil)
            } catch let error as SyncError where error.code == .invalidArguments || error.code == .limitExceeded {
                return (value, error)
            }
        }
    }

    /// Uploads the file, encrypted with a fresh key when the database has a keyring, in requests of at
    /// most a MiB, resuming where the server stands after a lost connection. Never holds the whole file.
    private func upload(_ file: URL, limits: ServerLimits) async throws -> AssetReference {
        guard let handle = FileHandle(forReadingAtPath: file.path) else {
            throw SyncError(.invalidArguments, "the asset file \(file.path) cannot be read; check that it exists")
        }
        defer { try? handle.close() }
        let plaintextSize = Int64(try handle.seekToEnd())
        try handle.seek(toOffset: 0)
        var encryptor = keyring == nil ? nil : AssetEncryptor()
        let size = encryptor == nil ? plaintextSize : AssetKey.ciphertextSize(ofPlaintext: plaintextSize)
        guard size >= 1 else {
            throw SyncError(.invalidArguments, "the asset file \(file.path) is empty; an asset holds at least one byte")
        }
        guard size <= limits.maximumAssetBytes else {
            throw SyncError(
                .limitExceeded,
                "the asset file \(file.path) (\(plaintextSize) bytes) is larger than the server's limit of \(limits.maximumAssetBytes) bytes per asset"
            )
        }
        let client = DatabaseClient(database: self)
        let upload: AssetUpload = try await client.post(.createUpload, CreateAssetUploadRequest(size: size))
        let requestBytes = min(limits.maximumRequestBytes, 1024 * 1024)
        var pending: [UInt8] = []
        var sent: Int64 = 0
        var read: Int64 = 0
        while read < plaintextSize {
            let chunk = try handle.read(upToCount: requestBytes) ?? Data()
            guard !chunk.isEmpty else { break }
            read += Int64(chunk.count)
            pending += encryptor?.update(chunk) ?? [UInt8](chunk)
            while pending.count >= requestBytes {
                try await sendUploadBytes(pending[0..<requestBytes], of: upload, from: sent, client: client)
                sent += Int64(requestBytes)
                pending.removeFirst(requestBytes)
            }
        }
        guard read == plaintextSize else {
            throw SyncError(.invalidArguments, "the asset file \(file.path) changed while it was uploaded; save again")
        }
        var key: AssetKey?
        if var finishing = encryptor {
            let (last, assetKey) = finishing.finish()
            pending += last
            key = assetKey
            encryptor = nil
        }
        while !pending.isEmpty {
            let count = min(pending.count, requestBytes)
            try await sendUploadBytes(pending[0..<count], of: upload, from: sent, client: client)
            sent += Int64(count)
            pending.removeFirst(count)
        }
        return AssetReference(
            assetID: upload.uploadID, size: size,
            key: key.map { LocalAssetKey.opened(assetID: upload.uploadID, $0).encoded })
    }

    /// Sends `bytes` from byte `first` of the upload; after a lost connection, asks where the upload stands
    /// and sends the rest from there (a few times, then gives up with the network's error).
    private func sendUploadBytes(
        _ bytes: ArraySlice<UInt8>, of upload: AssetUpload, from first: Int64, client: DatabaseClient
    ) async throws {
        var from = first
        var attempts = 0
        let end = first + Int64(bytes.count)
        while from < end {
            let part = bytes[(bytes.startIndex + Int(from - first))...]
            do {
                _ = try await client.send(
                    .appendToUpload, ["id": upload.uploadID], body: Array(part),
                    headers: [
                        ("Content-Range", ByteRange(from..<end).contentRange(total: upload.size)),
                        ("Content-Type", "application/octet-stream"),
                    ])
                return
            } catch let error as SyncError where error.code == .networkFailure && attempts < 5 {
                attempts += 1
                let status: AssetUpload = try client.decode(
                    AssetUpload.self, try await client.send(.uploadStatus, ["id": upload.uploadID], body: nil))
                guard (first...end).contains(status.received) else { throw error }
                from = status.received
            }
        }
    }

    /// The content of `asset`, which the record `recordID` names: the cached copy, or downloaded now
    /// (decrypted and checked as it arrives) into ``assetCache``. Returns the file.
    /// - Throws: `unknownItem` when the record no longer names the asset; `recordTampered` when the bytes
    ///   the server sent are not the asset's (altered, cut short, another asset's), and nothing is kept.
    /// `progress` hears the bytes received so far and the asset's size on the server, as they arrive.
    public func fetchAssetContent(
        _ asset: Asset, of recordID: Record.ID,
        progress: (@Sendable (_ received: Int64, _ total: Int64) -> Void)? = nil
    ) async throws -> URL {
        if let file = asset.fileURL, asset.reference == nil { return file }
        guard let reference = asset.reference else {
            throw SyncError(.invalidArguments, "\(asset) names no asset")
        }
        if let cached = assetCache.file(for: reference.assetID) { return cached }
        var decryptor: AssetDecryptor?
        if let key = reference.key {
            guard case .opened(_, let assetKey) = LocalAssetKey(key) else { throw Self.noPassphrase(recordID) }
            decryptor = try AssetDecryptor(key: assetKey)
        }
        let (temporary, handle) = try assetCache.temporaryFile()
        var received: Int64 = 0
        do {
            let connection = ServerConnection(
                serverURL: serverURL, token: try await credentials.token(), deviceID: deviceID)
            _ = try await connection.download(
                AssetDownload.path(assetID: reference.assetID, recordID: recordID, scope: scope)
            ) { buffer in
                received += Int64(buffer.readableBytes)
                progress?(received, reference.size)
                let bytes = buffer.readableBytesView
                try handle.write(contentsOf: try decryptor?.update(bytes) ?? [UInt8](bytes))
            }
            if var finishing = decryptor { try handle.write(contentsOf: try finishing.finish()) }
            try handle.synchronize()
            try handle.close()
            return try assetCache.keep(temporary, as: reference.assetID)
        } catch let error as EncryptionError {
            try? handle.close()
            try? FileManager.default.removeItem(at: temporary)
            throw SyncError(
                .recordTampered,
                "asset '\(reference.assetID)' of \(recordID) was refused: \(error.message); nothing of it was kept")
        } catch {
            try? handle.close()
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }
}
