import Foundation

/// The body of `POST /v1/assets/uploads`: the size of the asset to upload, in bytes.
public struct CreateAssetUploadRequest: Codable, Sendable, Hashable {
    public var size: Int64

    public init(size: Int64) {
        self.size = size
    }
}

/// An upload as the server holds it: the answer to making one, to sending it bytes and to asking
/// where it stands. A record names it by ``uploadID`` (as ``AssetReference/assetID``) once
/// ``received`` equals ``size``.
public struct AssetUpload: Codable, Sendable, Hashable {
    public var uploadID: String
    public var size: Int64
    /// How many of its bytes the server holds: the next request sends from this byte.
    public var received: Int64

    public init(uploadID: String, size: Int64, received: Int64) {
        self.uploadID = uploadID
        self.size = size
        self.received = received
    }

    public var isComplete: Bool { received == size }

    private enum CodingKeys: String, CodingKey {
        case uploadID, size, received
    }

    /// Decodes an upload, refusing one that makes no sense (a client must not be led to send from a
    /// byte before zero or past the end by a broken or hostile server).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        uploadID = try container.decode(String.self, forKey: .uploadID)
        size = try container.decode(Int64.self, forKey: .size)
        received = try container.decode(Int64.self, forKey: .received)
        if let problem = AssetReference.problem(withAssetID: uploadID) {
            throw DecodingError.dataCorruptedError(forKey: .uploadID, in: container, debugDescription: problem)
        }
        guard size >= 1, (0...size).contains(received) else {
            throw DecodingError.dataCorruptedError(
                forKey: .received, in: container,
                debugDescription: "an upload of \(size) bytes cannot hold \(received)")
        }
    }
}

/// One range of bytes in HTTP's `Content-Range` (`bytes 0-1023/4096`) and `Range` (`bytes=0-1023`,
/// `bytes=1024-`, `bytes=-512`) headers, as uploads and downloads of assets use them (RFC 9110 §14).
public struct ByteRange: Sendable, Hashable {
    /// The bytes, end excluded.
    public var range: Range<Int64>

    public init(_ range: Range<Int64>) {
        self.range = range
    }

    /// `bytes FIRST-LAST/TOTAL` for a range of a resource of `total` bytes.
    public func contentRange(total: Int64) -> String {
        "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(total)"
    }

    /// Reads `bytes FIRST-LAST/TOTAL`: the range and the total, or nil when `text` is not one
    /// (a range that is empty, backwards or past the total is not one).
    public static func parseContentRange(_ text: String) -> (range: ByteRange, total: Int64)? {
        guard text.hasPrefix("bytes ") else { return nil }
        let parts = text.dropFirst(6).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let total = number(parts[1]) else { return nil }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = number(bounds[0]), let last = number(bounds[1]),
            first <= last, last < total
        else { return nil }
        return (ByteRange(first..<(last + 1)), total)
    }

    /// What a `Range` header asks of a resource of `size` bytes.
    public enum Request: Sendable, Hashable {
        /// No range the server serves (none, another unit, several ranges, or not well formed):
        /// answer the whole resource, as RFC 9110 allows.
        case whole
        /// One range within the resource.
        case part(ByteRange)
        /// A range that starts past the end: answer 416.
        case unsatisfiable
    }

    /// Reads a `Range` header's single range against a resource of `size` bytes.
    public static func parseRange(_ text: String?, size: Int64) -> Request {
        guard let text, text.hasPrefix("bytes=") else { return .whole }
        let spec = text.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let bounds = spec.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2 else { return .whole }
        if bounds[0].isEmpty {
            // The last N bytes.
            guard let count = number(bounds[1]) else { return .whole }
            guard count > 0 else { return .unsatisfiable }
            return .part(ByteRange(max(0, size - count)..<size))
        }
        guard let first = number(bounds[0]) else { return .whole }
        var end = size
        if !bounds[1].isEmpty {
            guard let last = number(bounds[1]), last >= first else { return .whole }
            end = min(size, last + 1)
        }
        guard first < size else { return .unsatisfiable }
        return .part(ByteRange(first..<end))
    }

    /// A decimal number of at most 18 digits (so that it fits Int64 with room), nothing else.
    private static func number(_ text: Substring) -> Int64? {
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(text)
    }
}

/// Where an asset is downloaded: `/v1/databases/{scope}/assets/{assetID}?zoneName=…&recordName=…`,
/// with `&ownerName=…` for a zone of another owner. The record is the one whose field names the
/// asset: the server authorises the download as it would a lookup of that record.
public enum AssetDownload {
    public static func path(assetID: String, recordID: RecordValue.ID, scope: DatabaseScope) -> String {
        let encoded = Endpoint.encodedSegment
        var query = "zoneName=\(encoded(recordID.zoneID.zoneName))&recordName=\(encoded(recordID.recordName))"
        if recordID.zoneID.ownerName != RecordZone.ID.defaultOwnerName {
            query += "&ownerName=\(encoded(recordID.zoneID.ownerName))"
        }
        return Endpoint.downloadAsset.path(["scope": scope.rawValue, "assetID": assetID]) + "?" + query
    }
}
