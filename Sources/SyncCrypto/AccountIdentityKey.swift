import Crypto
import Foundation

/// An account's X25519 key pair: the public key is published with the account, so that owners can wrap
/// zone keys to it (``ZoneKeyChain/wrapped(toParticipant:by:ownerName:participantName:zoneName:)``); the
/// private key is stored on the server only wrapped by the ``AccountKey``, so only devices that know the
/// passphrase hold it.
///
/// Wrapped private key: a format byte (5), the account key's version (UInt32, big-endian), then AES-GCM's
/// nonce | ciphertext | tag over the 32 private-key bytes. The associated data binds the account key's
/// version and the public key, so a wrapped private key paired with another public key does not open.
public struct AccountIdentityKey: Sendable {
    /// The private half; never leaves the device unwrapped.
    let privateKey: Curve25519.KeyAgreement.PrivateKey

    /// The format byte of a wrapped private key.
    static let wrappedFormat: UInt8 = 5
    /// The length of a wrapped private key: header, nonce, the 32-byte key, and the tag.
    static let wrappedByteCount = 1 + 4 + SealedBytes.overhead + 32
    /// The length of an X25519 public key.
    public static let publicKeyByteCount = 32

    init(privateKey: Curve25519.KeyAgreement.PrivateKey) {
        self.privateKey = privateKey
    }

    /// Makes a new random key pair.
    public static func generate() -> AccountIdentityKey {
        AccountIdentityKey(privateKey: Curve25519.KeyAgreement.PrivateKey())
    }

    /// The public key's 32 bytes, as the account publishes them.
    public var publicKey: Data { privateKey.publicKey.rawRepresentation }

    /// The private key sealed under `accountKey`, to store on the server beside ``publicKey``.
    public func wrappedPrivateKey(by accountKey: AccountKey) -> Data {
        let accountVersion = UInt32(accountKey.keyVersion)
        var wrapped = Data([Self.wrappedFormat])
        SealedBytes.append(accountVersion, to: &wrapped)
        wrapped.append(
            SealedBytes.seal(
                privateKey.rawRepresentation, using: accountKey.key,
                authenticating: Self.context(accountVersion: accountVersion, publicKey: publicKey)))
        return wrapped
    }

    /// Opens a private key wrapped by ``wrappedPrivateKey(by:)``, checking that it is the private half of
    /// `publicKey`.
    ///
    /// - Throws: ``EncryptionError/Code/damaged`` when it does not open or does not belong to `publicKey`;
    ///   ``EncryptionError/Code/keyVersionMismatch`` when another generation of the account key wrapped it;
    ///   ``EncryptionError/Code/unsupportedFormat`` for a format this version does not know.
    public init(unwrapping wrapped: Data, publicKey: Data, with accountKey: AccountKey) throws {
        let bytes = [UInt8](wrapped)
        let damaged = EncryptionError(
            .damaged,
            "the account's private key does not open with this account key, or does not match the account's public "
                + "key: it was altered or damaged; sync again, and if this persists, reset encrypted data")
        guard let format = bytes.first else { throw damaged }
        guard format == Self.wrappedFormat else {
            throw EncryptionError(
                .unsupportedFormat,
                "the account's private key was written in format \(format), which this version does not know; update "
                    + "the app")
        }
        guard bytes.count == Self.wrappedByteCount, publicKey.count == Self.publicKeyByteCount else { throw damaged }
        let accountVersion = SealedBytes.uint32(in: bytes, at: 1)
        guard Int(accountVersion) == accountKey.keyVersion else {
            throw EncryptionError(
                .keyVersionMismatch,
                "the account's private key was wrapped by account key version \(accountVersion), but this device "
                    + "holds version \(accountKey.keyVersion); enter the passphrase in use on your other devices")
        }
        guard
            let raw = SealedBytes.open(
                bytes[5...], using: accountKey.key,
                authenticating: Self.context(accountVersion: accountVersion, publicKey: publicKey)),
            let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw),
            key.publicKey.rawRepresentation == publicKey
        else { throw damaged }
        self.init(privateKey: key)
    }

    /// Whether `bytes` can be an X25519 public key (32 bytes that the curve accepts).
    public static func isPublicKey(_ bytes: Data) -> Bool {
        bytes.count == publicKeyByteCount
            && (try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: bytes)) != nil
    }

    private static func context(accountVersion: UInt32, publicKey: Data) -> AssociatedData {
        var context = AssociatedData(purpose: "SyncCrypto.accountPrivateKey")
        context.append(wrappedFormat)
        context.append(accountVersion)
        context.append(publicKey)
        return context
    }
}
