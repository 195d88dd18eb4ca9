import Crypto
import Foundation

/// Every version of a zone's key, oldest first: values name the version they were sealed with, so a
/// device opens each with its own version and seals new ones with the newest. Rotation adds a version
/// (``rotated()``); nothing already sealed is sealed again.
///
/// Beside the keys, a chain carries what its holder needs to keep it safe: for a zone's owner, the
/// participants the newest version was given to (``holders``; when one of them is no longer a
/// participant, the owner rotates); for a participant, the owner's public key, pinned when they accepted
/// (``pinnedOwnerKey``: only chains wrapped by that key are taken), and the share's token
/// (``shareToken``), with which the participant stores a newer chain in their own slot.
///
/// Wrapped under the account key (format 3): a format byte, the newest version and the account key's
/// version (UInt32, big-endian each), then AES-GCM's nonce | ciphertext | tag over ``KeyChainEncoding``.
/// The associated data binds owner and zone name and both versions. A format-1 ``ZoneKey`` opens as a
/// chain of one key.
public struct ZoneKeyChain: Sendable {
    /// The keys, by ascending version, no version twice; never empty.
    public let keys: [ZoneKey]
    /// For the owner: the user record names of the participants the newest version was wrapped to.
    public var holders: Set<String>
    /// For a participant: the owner's X25519 public key, pinned at acceptance.
    public var pinnedOwnerKey: Data?
    /// For a participant: the token of the share the chain came with.
    public var shareToken: String?

    /// The format byte of a chain wrapped by the account key.
    static let wrappedFormat: UInt8 = 3
    /// The most versions a chain holds: its wrapped form stays well inside what the server stores.
    public static let maximumVersions = 256

    /// A chain of the given keys.
    ///
    /// - Throws: ``EncryptionError/Code/damaged`` when `keys` is empty, names a version twice, or holds
    ///   more than ``maximumVersions``.
    public init(
        keys: [ZoneKey], holders: Set<String> = [], pinnedOwnerKey: Data? = nil, shareToken: String? = nil
    ) throws {
        let sorted = keys.sorted { $0.version < $1.version }
        guard !sorted.isEmpty, sorted.count <= Self.maximumVersions,
            zip(sorted, sorted.dropFirst()).allSatisfy({ $0.version < $1.version })
        else {
            throw EncryptionError(
                .damaged,
                "a zone's key chain must hold 1 to \(Self.maximumVersions) keys, each version once; it was altered or "
                    + "damaged")
        }
        self.keys = sorted
        self.holders = holders
        self.pinnedOwnerKey = pinnedOwnerKey
        self.shareToken = shareToken
    }

    /// A chain of one key.
    public init(_ key: ZoneKey) {
        keys = [key]
        holders = []
        pinnedOwnerKey = nil
        shareToken = nil
    }

    /// A chain with one new random key (version 1), for a zone that has none.
    public static func generate() throws -> ZoneKeyChain {
        ZoneKeyChain(try ZoneKey.generate(version: 1))
    }

    /// The key new values are sealed with.
    public var newest: ZoneKey {
        // `keys` is never empty (both initialisers make sure).
        keys[keys.count - 1]
    }

    /// The key of `version`, if the chain holds it.
    public func key(version: Int) -> ZoneKey? {
        // Chains are short and mostly contiguous: look where the version should be first.
        if let first = keys.first, version >= first.version, version - first.version < keys.count,
            keys[version - first.version].version == version
        {
            return keys[version - first.version]
        }
        return keys.first { $0.version == version }
    }

    /// The chain with a new random key of the next version, given to nobody yet (no holders).
    ///
    /// - Throws: ``EncryptionError/Code/invalidKeyVersion`` past the largest version,
    ///   ``EncryptionError/Code/damaged`` past ``maximumVersions``.
    public func rotated() throws -> ZoneKeyChain {
        try ZoneKeyChain(
            keys: keys + [try ZoneKey.generate(version: newest.version + 1)], holders: [],
            pinnedOwnerKey: pinnedOwnerKey,
            shareToken: shareToken)
    }

    /// Whether every version both chains hold is the same key in both: a chain from elsewhere that
    /// disagrees with what this device already holds is not the zone's.
    public func agrees(with other: ZoneKeyChain) -> Bool {
        for key in other.keys {
            if let mine = self.key(version: key.version), !mine.sameKey(as: key) { return false }
        }
        return true
    }

    /// The keys of both chains (which must agree), with this chain's holders, pin and token.
    ///
    /// - Throws: ``EncryptionError/Code/damaged`` when they disagree on a version.
    public func merging(_ other: ZoneKeyChain) throws -> ZoneKeyChain {
        guard agrees(with: other) else {
            throw EncryptionError(
                .damaged,
                "two key chains of one zone hold different keys for the same version: one of them was forged; keep "
                    + "the one you have and tell the zone's owner")
        }
        var byVersion = Dictionary(uniqueKeysWithValues: keys.map { ($0.version, $0) })
        for key in other.keys where byVersion[key.version] == nil { byVersion[key.version] = key }
        return try ZoneKeyChain(
            keys: Array(byVersion.values), holders: holders, pinnedOwnerKey: pinnedOwnerKey, shareToken: shareToken)
    }

    // MARK: Under the account key

    /// The chain sealed under `accountKey` for the zone `zoneName` of `ownerName` (format 3).
    public func wrapped(by accountKey: AccountKey, zoneName: String, ownerName: String) -> Data {
        let newestVersion = UInt32(newest.version)
        let accountVersion = UInt32(accountKey.keyVersion)
        var wrapped = Data([Self.wrappedFormat])
        SealedBytes.append(newestVersion, to: &wrapped)
        SealedBytes.append(accountVersion, to: &wrapped)
        wrapped.append(
            SealedBytes.seal(
                KeyChainEncoding.encode(self), using: accountKey.key,
                authenticating: Self.context(
                    zoneName: zoneName, ownerName: ownerName, newestVersion: newestVersion,
                    accountVersion: accountVersion)))
        return wrapped
    }

    /// Opens a chain wrapped by ``wrapped(by:zoneName:ownerName:)``, or a single zone key of format 1.
    ///
    /// - Throws: ``EncryptionError/Code/damaged`` when it does not open (altered, or another zone's);
    ///   ``EncryptionError/Code/keyVersionMismatch`` when another generation of the account key wrapped it;
    ///   ``EncryptionError/Code/unsupportedFormat`` for a format this version does not know.
    public init(unwrapping wrapped: Data, with accountKey: AccountKey, zoneName: String, ownerName: String) throws {
        let bytes = [UInt8](wrapped)
        if bytes.first == ZoneKey.wrappedFormat {
            self.init(try ZoneKey(unwrapping: wrapped, with: accountKey, zoneName: zoneName, ownerName: ownerName))
            return
        }
        let zone = "zone '\(zoneName)' (owner '\(ownerName)')"
        let damaged = EncryptionError(
            .damaged,
            "the keys of \(zone) do not open with this account key: they were altered, damaged, or belong to "
                + "another zone; sync again, and if this persists, reset encrypted data (which deletes it)")
        guard let format = bytes.first else { throw damaged }
        guard format == Self.wrappedFormat else {
            throw EncryptionError(
                .unsupportedFormat,
                "the keys of \(zone) were written in format \(format), which this version does not know; update the app"
            )
        }
        guard bytes.count >= 9 + SealedBytes.overhead else { throw damaged }
        let newestVersion = SealedBytes.uint32(in: bytes, at: 1)
        let accountVersion = SealedBytes.uint32(in: bytes, at: 5)
        guard Int(accountVersion) == accountKey.keyVersion else {
            throw EncryptionError(
                .keyVersionMismatch,
                "the keys of \(zone) were wrapped by account key version \(accountVersion), but this device holds "
                    + "version \(accountKey.keyVersion); enter the passphrase in use on your other devices")
        }
        let context = Self.context(
            zoneName: zoneName, ownerName: ownerName, newestVersion: newestVersion, accountVersion: accountVersion)
        guard let plaintext = SealedBytes.open(bytes[9...], using: accountKey.key, authenticating: context),
            let chain = KeyChainEncoding.decode(plaintext), chain.newest.version == Int(newestVersion)
        else { throw damaged }
        self = chain
    }

    private static func context(
        zoneName: String, ownerName: String, newestVersion: UInt32, accountVersion: UInt32
    ) -> AssociatedData {
        var context = AssociatedData(purpose: "SyncCrypto.zoneKeyChain")
        context.append(wrappedFormat)
        context.append(ownerName)
        context.append(zoneName)
        context.append(newestVersion)
        context.append(accountVersion)
        return context
    }
}
