import Foundation
import SyncCore
import SyncCrypto

/// What an ``AssetReference/key`` holds on this device, apart from what travels: a tag byte no sealed
/// value starts with (sealed ones start with their format, 1 or 2), then the content. Neither form is
/// ever sent: a save uploads a pending asset and seals an opened key (``RecordSeal``), and a key that
/// arrives must be a sealed one, or the record is refused as tampered.
enum LocalAssetKey: Equatable {
    /// A new asset, to upload from this file.
    case pending(URL)
    /// An uploaded asset's key, opened here: bound to its asset ID, so that a key cannot serve another.
    case opened(assetID: String, AssetKey)

    private static let pendingTag: UInt8 = 0xA0
    private static let openedTag: UInt8 = 0xA1

    var isPending: Bool { if case .pending = self { true } else { false } }

    /// Reads a local form; nil for anything else (a sealed key, or nothing of ours).
    init?(_ data: Data) {
        guard let tag = data.first else { return nil }
        let body = data.dropFirst()
        switch tag {
        case Self.pendingTag:
            guard let path = String(data: body, encoding: .utf8) else { return nil }
            self = .pending(URL(fileURLWithPath: path))
        case Self.openedTag:
            guard let opened = Self.openedContent(Data(body)) else { return nil }
            self = opened
        default:
            return nil
        }
    }

    var encoded: Data {
        switch self {
        case .pending(let file): Data([Self.pendingTag]) + Data(file.path.utf8)
        case .opened: Data([Self.openedTag]) + content
        }
    }

    /// What an opened key seals: the asset ID (32 ASCII digits), key (32), digest (32), plaintext size.
    var content: Data {
        guard case .opened(let assetID, let key) = self else { return Data() }
        var size = key.plaintextSize.bigEndian
        return Data(assetID.utf8) + key.key + key.digest + withUnsafeBytes(of: &size) { Data($0) }
    }

    /// Reads what ``content`` wrote; nil when it is not that.
    static func openedContent(_ data: Data) -> LocalAssetKey? {
        guard data.count == 32 + 32 + 32 + 8 else { return nil }
        let bytes = [UInt8](data)
        let assetID = String(decoding: bytes[0..<32], as: UTF8.self)
        guard AssetReference.problem(withAssetID: assetID) == nil else { return nil }
        let size = bytes[96..<104].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        guard size >= 0 else { return nil }
        return .opened(
            assetID: assetID, AssetKey(key: Data(bytes[32..<64]), digest: Data(bytes[64..<96]), plaintextSize: size))
    }
}
