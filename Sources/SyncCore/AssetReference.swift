import Foundation

/// What a record field holds for an asset, CloudKit's `CKAsset` on the wire: the asset's bytes live on
/// the server outside the record (a record stays under its size limit; an asset may be far larger),
/// uploaded before the record that names them and downloaded only when asked for.
///
/// `{"type": "asset", "value": {"assetID": "9f86d081884c7d659a2feaa0c55ad015", "size": 52311,
/// "key": "<base64>"}}`: the ID the server gave the upload, the bytes it holds, and what the client
/// keeps with them to read them (the asset's key and digest, sealed under the zone's key where the
/// zone has one). The server checks the ID and the size against the upload, stores `key` as it came and
/// cannot read it.
public struct AssetReference: Sendable, Hashable, Codable {
    /// The upload's ID: 32 lowercase hexadecimal digits the server chose.
    public var assetID: String
    /// How many bytes the server holds (for an encrypted asset, its ciphertext).
    public var size: Int64
    /// The client's own: opaque to the server, at most ``maximumKeyBytes``.
    public var key: Data?

    /// The most bytes ``key`` may hold.
    public static let maximumKeyBytes = 1024

    public init(assetID: String, size: Int64, key: Data? = nil) {
        self.assetID = assetID
        self.size = size
        self.key = key
    }

    /// A new random asset ID.
    public static func newID() -> String { RandomIdentifier.hexadecimal(bytes: 16) }

    /// Why `id` cannot be an asset ID, or nil.
    public static func problem(withAssetID id: String) -> String? {
        guard Hexadecimal.isLowercase(id, digits: 32) else {
            return "asset ID \(NameRules.quoted(id)) is not one the server gave: 32 lowercase hexadecimal digits"
        }
        return nil
    }

    /// Why this reference cannot be stored, or nil: the ID's form, a size of at least one byte, a key
    /// within its limit.
    public var problem: String? {
        if let problem = Self.problem(withAssetID: assetID) { return problem }
        if size < 1 { return "asset '\(assetID)' has size \(size); an asset holds at least one byte" }
        if let key, key.count > Self.maximumKeyBytes {
            return "asset '\(assetID)' has a key of \(key.count) bytes; the limit is \(Self.maximumKeyBytes)"
        }
        return nil
    }

    private enum CodingKeys: String, CodingKey {
        case assetID, size, key
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        assetID = try container.decode(String.self, forKey: .assetID)
        size = try container.decode(Int64.self, forKey: .size)
        if let text = try container.decodeIfPresentNotNull(String.self, forKey: .key) {
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .key, in: container, debugDescription: "an asset's key must be base64")
            }
            key = data
        }
        if let problem {
            throw DecodingError.dataCorruptedError(forKey: .assetID, in: container, debugDescription: problem)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(assetID, forKey: .assetID)
        try container.encode(size, forKey: .size)
        try container.encodeIfPresent(key?.base64EncodedString(), forKey: .key)
    }
}
