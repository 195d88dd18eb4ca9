import Crypto
import Foundation

/// A zone's data key: 256 random bits that seal the `encryptedValues` of the zone's records (through
/// ``FieldCipher``), stored on the server only wrapped by the ``AccountKey``.
///
/// Wrapped form: a format byte (1), the zone key's version and the account key's version (UInt32,
/// big-endian each), then AES-GCM's nonce | ciphertext | tag. The associated data binds the zone's identity
/// (owner and zone name) and both versions, so a wrapped key moved to another zone, or relabelled with
/// another version, does not open.
public struct ZoneKey: Sendable {
    /// 256 bits.
    let key: SymmetricKey
    /// The key's version, from 1; written in front of every value it seals.
    public let version: Int

    /// The format byte of a wrapped zone key.
    static let wrappedFormat: UInt8 = 1
    /// The length of a wrapped zone key: header, nonce, the 32-byte key, and the tag.
    static let wrappedByteCount = 1 + 4 + 4 + SealedBytes.overhead + 32

    private init(key: SymmetricKey, version: Int) {
        self.key = key
        self.version = version
    }

    /// A zone key from its 32 bytes (as an invitation carries it).
    init(rawBytes: Data, version: Int) throws {
        _ = try SealedBytes.keyVersion(version)
        self.init(key: SymmetricKey(data: rawBytes), version: version)
    }

    /// Makes a new random zone key.
    ///
    /// - Throws: ``EncryptionError/Code/invalidKeyVersion`` when `version` is outside 1...UInt32.max.
    public static func generate(version: Int = 1) throws -> ZoneKey {
        _ = try SealedBytes.keyVersion(version)
        return ZoneKey(key: SymmetricKey(size: .bits256), version: version)
    }

    /// The key sealed under `accountKey` for the zone `zoneName` of `ownerName`, to store on the server.
    public func wrapped(by accountKey: AccountKey, zoneName: String, ownerName: String) -> Data {
        // Both versions were checked when their keys were made, so they fit.
        let zoneVersion = UInt32(version)
        let accountVersion = UInt32(accountKey.keyVersion)
        var wrapped = Data([Self.wrappedFormat])
        SealedBytes.append(zoneVersion, to: &wrapped)
        SealedBytes.append(accountVersion, to: &wrapped)
        let context = Self.context(
            zoneName: zoneName, ownerName: ownerName, zoneVersion: zoneVersion, accountVersion: accountVersion)
        wrapped.append(
            SealedBytes.seal(key.withUnsafeBytes { Data($0) }, using: accountKey.key, authenticating: context))
        return wrapped
    }

    /// Opens a zone key wrapped by ``wrapped(by:zoneName:ownerName:)``, as read back from the server.
    ///
    /// - Throws: ``EncryptionError/Code/damaged`` when it does not open (altered, truncated, or wrapped for
    ///   another zone); ``EncryptionError/Code/keyVersionMismatch`` when it was wrapped by another generation
    ///   of the account key; ``EncryptionError/Code/unsupportedFormat`` for a format this version does not know.
    public init(unwrapping wrapped: Data, with accountKey: AccountKey, zoneName: String, ownerName: String) throws {
        let bytes = [UInt8](wrapped)
        let zone = "zone '\(zoneName)' (owner '\(ownerName)')"
        let damaged = EncryptionError(
            .damaged,
            "the key of \(zone) does not open with this account key: it was altered, damaged, or belongs to "
                + "another zone; sync again, and if this persists, reset encrypted data (which deletes it)")
        guard let format = bytes.first else { throw damaged }
        guard format == Self.wrappedFormat else {
            throw EncryptionError(
                .unsupportedFormat,
                "the key of \(zone) was written in format \(format), which this version does not know; update "
                    + "the app")
        }
        guard bytes.count == Self.wrappedByteCount else { throw damaged }
        let zoneVersion = SealedBytes.uint32(in: bytes, at: 1)
        let accountVersion = SealedBytes.uint32(in: bytes, at: 5)
        guard zoneVersion >= 1 else { throw damaged }
        guard Int(accountVersion) == accountKey.keyVersion else {
            throw EncryptionError(
                .keyVersionMismatch,
                "the key of \(zone) was wrapped by account key version \(accountVersion), but this device holds "
                    + "version \(accountKey.keyVersion); enter the passphrase in use on your other devices")
        }
        let context = Self.context(
            zoneName: zoneName, ownerName: ownerName, zoneVersion: zoneVersion, accountVersion: accountVersion)
        guard let keyBytes = SealedBytes.open(bytes[9...], using: accountKey.key, authenticating: context),
            keyBytes.count == 32
        else { throw damaged }
        self.init(key: SymmetricKey(data: keyBytes), version: Int(zoneVersion))
    }

    private static func context(
        zoneName: String, ownerName: String, zoneVersion: UInt32, accountVersion: UInt32
    ) -> AssociatedData {
        var context = AssociatedData(purpose: "SyncCrypto.zoneKey")
        context.append(wrappedFormat)
        context.append(ownerName)
        context.append(zoneName)
        context.append(zoneVersion)
        context.append(accountVersion)
        return context
    }

    /// Whether both are the same 256 bits with the same version.
    func sameKey(as other: ZoneKey) -> Bool {
        version == other.version && rawBytes == other.rawBytes
    }

    /// The key's 32 bytes, for encodings that seal them.
    var rawBytes: Data { key.withUnsafeBytes { Data($0) } }
}
