import Foundation
import SyncCore
import SyncCrypto

/// A file kept apart from its record, CloudKit's `CKAsset`: `record["photo"] = Asset(fileURL: url)`.
///
/// A save uploads the file before the record (encrypted with a key of its own when the database has a
/// keyring: the server holds ciphertext only, the key travels sealed in the record). A fetched record's
/// asset holds no bytes: ``fileURL`` points at this device's cached copy once one is downloaded
/// (``Database/fetchAssetContent(_:of:)``, or the engine's apps asking for it), and is nil before.
public final class Asset: RecordValueProtocol, CustomStringConvertible {
    /// The file a new asset uploads.
    private let pendingFile: URL?
    /// The asset as a record names it, once uploaded (its key opened on this device).
    package let reference: AssetReference?

    /// An asset whose bytes are the file at `fileURL`, read when the record is saved.
    public init(fileURL: URL) {
        pendingFile = fileURL
        reference = nil
    }

    /// The asset a record's field names.
    package init(reference: AssetReference) {
        if let key = reference.key, case .pending(let file) = LocalAssetKey(key) {
            pendingFile = file
            self.reference = nil
        } else {
            pendingFile = nil
            self.reference = reference
        }
    }

    /// The asset's bytes on this device: the file it was made with, or the cached download of a fetched
    /// one (nil until it is downloaded).
    public var fileURL: URL? {
        if let pendingFile { return pendingFile }
        guard let reference else { return nil }
        return AssetCache.anyFile(for: reference.assetID)
    }

    /// The server's ID for the asset, once uploaded.
    public var assetID: String? { reference?.assetID }

    /// The size of the asset's content: the file's, or (fetched) what the record says.
    public var size: Int64? {
        if let pendingFile {
            return (try? FileManager.default.attributesOfItem(atPath: pendingFile.path)[.size] as? NSNumber)?.int64Value
        }
        guard let reference else { return nil }
        if let key = reference.key, case .opened(_, let assetKey) = LocalAssetKey(key) { return assetKey.plaintextSize }
        return reference.size
    }

    public var recordFieldValue: FieldValue {
        if let reference { return .asset(reference) }
        // Not uploaded yet: a placeholder no server accepts (no ID), which a save replaces by the upload.
        return .asset(AssetReference(assetID: "", size: 0, key: LocalAssetKey.pending(pendingFile!).encoded))
    }

    public var description: String {
        if let pendingFile { return "Asset(fileURL: \(pendingFile.path))" }
        return "Asset(\(reference?.assetID ?? "?"))"
    }
}

extension FieldValue {
    /// Whether this value (or an element of it) is an asset not uploaded yet.
    var namesPendingAsset: Bool { assetReferences.contains(where: \.isPending) }
}

extension AssetReference {
    /// A new ``Asset``'s placeholder, before its upload.
    var isPending: Bool { key.map { LocalAssetKey($0).map(\.isPending) ?? false } ?? false }
}

extension FieldValue {
    /// The value with each asset it names (itself, or a list's elements) replaced by `transform`'s.
    func mappingAssets(_ transform: (AssetReference) throws -> AssetReference) rethrows -> FieldValue {
        switch self {
        case .asset(let reference): .asset(try transform(reference))
        case .list(let elements): .list(try elements.map { try $0.mappingAssets(transform) })
        default: self
        }
    }

    /// ``mappingAssets(_:)`` with an asynchronous transform.
    func mappingAssetsAsync(_ transform: (AssetReference) async throws -> AssetReference) async rethrows
        -> FieldValue
    {
        switch self {
        case .asset(let reference): return .asset(try await transform(reference))
        case .list(let elements):
            var mapped: [FieldValue] = []
            for element in elements { mapped.append(try await element.mappingAssetsAsync(transform)) }
            return .list(mapped)
        default: return self
        }
    }
}
