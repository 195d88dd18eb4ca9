/// The limits a server enforces, advertised at `GET /v1/limits`.
///
/// The defaults are CloudKit's: 400 items and 2 MB per request, 1 MB per record, 50 MB per asset.
public struct ServerLimits: Codable, Sendable, Hashable {
    /// Most saves plus deletes in one modify request.
    public var maximumItemsPerRequest: Int
    /// Most bytes in one request body.
    public var maximumRequestBytes: Int
    /// Most bytes of field data in one record (its fields as JSON).
    public var maximumRecordBytes: Int
    /// Results per fetch page when the client asks for none.
    public var defaultFetchResultsLimit: Int
    /// Most results per fetch page, whatever the client asks for.
    public var maximumFetchResultsLimit: Int
    /// Most bytes in one asset (``AssetReference``); uploads send them in requests of at most
    /// ``maximumRequestBytes``. Servers from before assets do not say it: they are read as having
    /// the default, which is what a client asks of them at most, and they refuse the upload anyway.
    public var maximumAssetBytes: Int64

    /// The default ``maximumAssetBytes``: CloudKit's 50 MB.
    public static let defaultMaximumAssetBytes: Int64 = 50 * 1024 * 1024

    public init(
        maximumItemsPerRequest: Int = 400, maximumRequestBytes: Int = 2 * 1024 * 1024,
        maximumRecordBytes: Int = 1024 * 1024, defaultFetchResultsLimit: Int = 400,
        maximumFetchResultsLimit: Int = 2000, maximumAssetBytes: Int64 = ServerLimits.defaultMaximumAssetBytes
    ) {
        self.maximumItemsPerRequest = maximumItemsPerRequest
        self.maximumRequestBytes = maximumRequestBytes
        self.maximumRecordBytes = maximumRecordBytes
        self.defaultFetchResultsLimit = defaultFetchResultsLimit
        self.maximumFetchResultsLimit = maximumFetchResultsLimit
        self.maximumAssetBytes = maximumAssetBytes
    }

    /// Decodes limits, refusing any below 1: clients split work by them, and a zero or negative
    /// limit from a broken or hostile server would have them loop or trap.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func positive(_ key: CodingKeys) throws -> Int {
            let value = try container.decode(Int.self, forKey: key)
            guard value >= 1 else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "a limit must be at least 1, not \(value)")
            }
            return value
        }
        maximumItemsPerRequest = try positive(.maximumItemsPerRequest)
        maximumRequestBytes = try positive(.maximumRequestBytes)
        maximumRecordBytes = try positive(.maximumRecordBytes)
        defaultFetchResultsLimit = try positive(.defaultFetchResultsLimit)
        maximumFetchResultsLimit = try positive(.maximumFetchResultsLimit)
        maximumAssetBytes =
            try container.decodeIfPresent(Int64.self, forKey: .maximumAssetBytes)
            ?? Self.defaultMaximumAssetBytes
        guard maximumAssetBytes >= 1 else {
            throw DecodingError.dataCorruptedError(
                forKey: .maximumAssetBytes, in: container,
                debugDescription: "a limit must be at least 1, not \(maximumAssetBytes)")
        }
    }
}
