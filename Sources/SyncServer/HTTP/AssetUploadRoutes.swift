import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SyncCore

/// `/v1/assets/uploads`: an asset's bytes go up before the record that names them (CloudKit's
/// `CKAsset`). A client makes an upload with the asset's size, sends its bytes in requests of at most
/// ``ServerLimits/maximumRequestBytes`` each with a `Content-Range`, and after a lost connection asks
/// where the upload stands and goes on from there. Only its uploader sees an upload: to anyone else,
/// one that exists answers as one that does not.
struct AssetUploadRoutes {
    let store: any RecordStore
    let configuration: SyncServerConfiguration
    let body: BodyCoding

    var limits: ServerLimits { configuration.limits }

    /// `POST /v1/assets/uploads` with `{"size": N}`: 201 with the new upload.
    func create(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let creation = try await body.decode(CreateAssetUploadRequest.self, from: request)
        guard creation.size >= 1 else {
            throw SyncError(.invalidArguments, "size is \(creation.size); an asset holds at least one byte")
        }
        guard creation.size <= limits.maximumAssetBytes else {
            throw SyncError(
                .limitExceeded,
                "an asset of \(creation.size) bytes is larger than this server's limit of \(limits.maximumAssetBytes) (GET /v1/limits); make it smaller"
            )
        }
        let id = AssetReference.newID()
        try await store.createAssetUpload(id: id, uploader: user, size: creation.size, now: configuration.clock.now())
        return try body.response(AssetUpload(uploadID: id, size: creation.size, received: 0), status: .created)
    }

    /// `GET /v1/assets/uploads/{id}`: where the upload stands.
    func status(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let upload = try await ownUpload(context)
        return try body.response(Self.answer(upload))
    }

    /// `PUT /v1/assets/uploads/{id}` with `Content-Range: bytes FIRST-LAST/SIZE` and those bytes:
    /// appends them where the upload stands. What arrived before a body was cut is kept.
    func append(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let upload = try await ownUpload(context)
        let (range, total) = try Self.contentRange(of: request, upload: upload, limits: limits)
        let declared = Int64(range.range.count)
        let stored = try await store.appendToAsset(
            id: upload.id, at: range.range.lowerBound, BoundedBody(base: request.body, limit: declared, upload: upload),
            now: configuration.clock.now())
        guard stored.received == range.range.upperBound else {
            throw SyncError(
                .invalidArguments,
                "the body held \(stored.received - range.range.lowerBound) bytes, but Content-Range announced \(declared) (\(range.contentRange(total: total))); the upload holds \(stored.received) bytes: send from there"
            )
        }
        return try body.response(Self.answer(stored))
    }

    private static func answer(_ asset: StoredAsset) -> AssetUpload {
        AssetUpload(uploadID: asset.id, size: asset.size, received: asset.received)
    }

    /// The caller's upload named in the path; another account's answers as one that does not exist.
    private func ownUpload(_ context: SyncRequestContext) async throws -> StoredAsset {
        let user = try context.requireUser()
        let id = context.parameters.get("id") ?? ""
        if let problem = AssetReference.problem(withAssetID: id) { throw SyncError(.invalidArguments, problem) }
        guard let asset = try await store.asset(id: id), asset.uploader == user else {
            throw AssetUploadRules.noSuchUpload(id)
        }
        return asset
    }

    /// The request's `Content-Range`, checked against the upload and the request size limit.
    private static func contentRange(of request: Request, upload: StoredAsset, limits: ServerLimits) throws -> (
        ByteRange, Int64
    ) {
        guard let header = request.headers[.contentRange] else {
            throw SyncError(
                .invalidArguments,
                "a PUT to an upload needs a Content-Range header naming the bytes it sends, such as 'bytes 0-\(min(upload.size, Int64(limits.maximumRequestBytes)) - 1)/\(upload.size)'"
            )
        }
        guard let (range, total) = ByteRange.parseContentRange(header) else {
            throw SyncError(
                .invalidArguments,
                "Content-Range '\(header.prefix(100))' is not 'bytes FIRST-LAST/SIZE' with FIRST ≤ LAST < SIZE")
        }
        guard total == upload.size else {
            throw SyncError(
                .invalidArguments,
                "Content-Range says the asset has \(total) bytes, but upload '\(upload.id)' was made for \(upload.size)"
            )
        }
        guard range.range.count <= limits.maximumRequestBytes else {
            throw SyncError(
                .limitExceeded,
                "Content-Range names \(range.range.count) bytes; send at most \(limits.maximumRequestBytes) per request (GET /v1/limits)"
            )
        }
        return (range, total)
    }
}

/// A request body that ends with an error after `limit` bytes, keeping the bytes before: the store
/// keeps what fitted and the client hears that the body was longer than its `Content-Range`.
private struct BoundedBody<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable
where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    let base: Base
    let limit: Int64
    let upload: StoredAsset

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        var remaining: Int64
        let limit: Int64
        let upload: StoredAsset

        var overflowed = false

        mutating func next() async throws -> ByteBuffer? {
            if overflowed { throw tooLong }
            guard var buffer = try await base.next() else { return nil }
            guard Int64(buffer.readableBytes) <= remaining else {
                // The bytes that fit go first; the next call says the rest does not.
                overflowed = true
                guard remaining > 0, let fitting = buffer.readSlice(length: Int(remaining)) else { throw tooLong }
                remaining = 0
                return fitting
            }
            remaining -= Int64(buffer.readableBytes)
            return buffer
        }

        private var tooLong: SyncError {
            SyncError(
                .invalidArguments,
                "the body holds more bytes than the \(limit) its Content-Range announced; upload '\(upload.id)' keeps those, ask where it stands (GET) and go on from there"
            )
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), remaining: limit, limit: limit, upload: upload)
    }
}
