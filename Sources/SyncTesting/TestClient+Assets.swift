import Foundation
import SyncCore

/// Assets through the HTTP API: uploads in requests with `Content-Range`, and downloads.
extension TestClient {
    /// `POST /v1/assets/uploads`.
    public func createUpload(size: Int64) async throws -> AssetUpload {
        try await call(.createUpload, CreateAssetUploadRequest(size: size))
    }

    /// `GET /v1/assets/uploads/{id}`.
    public func uploadStatus(_ id: String) async throws -> AssetUpload {
        try await call(.uploadStatus, parameters: ["id": id])
    }

    /// `PUT /v1/assets/uploads/{id}` of `bytes` from byte `first` of an asset of `total` bytes; the raw
    /// answer. `contentRange` replaces the header the bytes imply.
    public func sendUploadBytes(
        _ id: String, _ bytes: some Collection<UInt8>, from first: Int64, total: Int64, contentRange: String? = nil
    ) async throws -> HTTPAnswer {
        let range = contentRange ?? ByteRange(first..<(first + Int64(bytes.count))).contentRange(total: total)
        return try await send(
            .appendToUpload, ["id": id], body: Data(bytes),
            headers: [("Content-Range", range), ("Content-Type", "application/octet-stream")])
    }

    /// Uploads `bytes` in requests of `chunk` bytes; returns the reference a record names.
    public func upload(_ bytes: [UInt8], chunk: Int = 1024 * 1024, key: Data? = nil) async throws -> AssetReference {
        let upload = try await createUpload(size: Int64(bytes.count))
        var first = 0
        while first < bytes.count {
            let end = min(bytes.count, first + chunk)
            _ = try await sendUploadBytes(upload.uploadID, bytes[first..<end], from: Int64(first), total: upload.size)
                .decoded(as: AssetUpload.self)
            first = end
        }
        return AssetReference(assetID: upload.uploadID, size: upload.size, key: key)
    }

    /// `GET /v1/databases/{scope}/assets/{id}` of the asset `recordID` names; the raw answer.
    public func downloadAsset(
        _ assetID: String, of recordID: RecordValue.ID, scope: DatabaseScope = .private,
        headers: [(String, String)] = []
    ) async throws -> HTTPAnswer {
        try await send(.get, AssetDownload.path(assetID: assetID, recordID: recordID, scope: scope), headers: headers)
    }
}
