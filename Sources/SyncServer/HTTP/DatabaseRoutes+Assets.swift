import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import SyncCore

/// `GET /v1/databases/{scope}/assets/{assetID}?zoneName=…&recordName=…[&ownerName=…]`: an asset's
/// bytes, streamed, whole or one `Range`. Authorised exactly as the record that names it: the caller
/// must be able to look that record up (its owner, or a participant of a share that includes it),
/// and the record must name the asset now. Every other case answers as an asset that does not exist.
extension DatabaseRoutes {
    func downloadAsset(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let scope = try Self.scope(context)
        let assetID = context.parameters.get("assetID") ?? ""
        if let problem = AssetReference.problem(withAssetID: assetID) { throw SyncError(.invalidArguments, problem) }
        let recordID = try Self.assetRecordID(request.uri.queryParameters)
        try RequestValidation.validate(recordID, owner: scope == .private ? user : nil, context: "the query")
        let owner = scope == .private ? user : recordID.zoneID.ownerName
        let (found, failures) = try await visibleRecords(user: user, scope: scope, [recordID])
        if let failure = failures.first { throw failure.error }
        guard let row = found.first?.row, let asset = try await store.asset(id: assetID), asset.isComplete,
            asset.detachedAt == nil, asset.record == AssetPlace(owner: owner, key: row.key)
        else {
            throw SyncError(
                .unknownItem,
                "record '\(recordID.recordName)' names no asset '\(assetID)'; fetch the record again for the asset it names now"
            )
        }
        return Self.assetResponse(asset, request: request, store: store)
    }

    /// The record named by the query's `zoneName`, `recordName` and (in the shared database) `ownerName`.
    private static func assetRecordID(_ query: FlatDictionary<Substring, Substring>) throws -> RecordValue.ID {
        guard let zoneName = query["zoneName"].map(String.init), let recordName = query["recordName"].map(String.init)
        else {
            throw SyncError(
                .invalidArguments,
                "name the record whose field holds the asset: ?zoneName=…&recordName=… (and &ownerName=… in the shared database)"
            )
        }
        let ownerName = query["ownerName"].map(String.init) ?? RecordZone.ID.defaultOwnerName
        return RecordValue.ID(recordName: recordName, zoneID: RecordZone.ID(zoneName: zoneName, ownerName: ownerName))
    }

    /// The asset's bytes: whole (200) or the one range asked for (206), or 416 for a range past its end.
    /// An asset never changes (a new photo is a new asset), so its ID is a strong ETag.
    private static func assetResponse(_ asset: StoredAsset, request: Request, store: any RecordStore) -> Response {
        let eTag = "\"\(asset.id)\""
        var headers: HTTPFields = [
            .contentType: "application/octet-stream", .acceptRanges: "bytes", .eTag: eTag,
            .cacheControl: "private, max-age=31536000, immutable",
        ]
        // `If-Range` with another validator asks for the whole asset (RFC 9110 §13.1.5).
        let asked = request.headers[.ifRange].map { $0 == eTag } ?? true ? request.headers[.range] : nil
        var range = 0..<asset.size
        var status = HTTPResponse.Status.ok
        switch ByteRange.parseRange(asked, size: asset.size) {
        case .whole: break
        case .part(let part):
            range = part.range
            status = .partialContent
            headers[.contentRange] = part.contentRange(total: asset.size)
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(asset.size)"
            return Response(status: .rangeNotSatisfiable, headers: headers, body: .init())
        }
        let (id, bytes) = (asset.id, range)
        return Response(
            status: status, headers: headers,
            body: ResponseBody(contentLength: Int(bytes.count)) { writer in
                try await store.readAsset(id: id, range: bytes) { try await writer.write($0) }
                try await writer.finish(nil)
            })
    }
}
