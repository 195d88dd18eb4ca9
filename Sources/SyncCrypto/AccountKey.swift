import Crypto
import Foundation
import _CryptoExtras

/// The key that wraps an account's zone keys, derived on the device from the passphrase with scrypt.
///
/// Neither the key nor the passphrase ever leaves the device; the server holds only the
/// ``EncryptionSettings`` needed to derive it again, and the zone keys it wraps.
public struct AccountKey: Sendable {
    /// 256 bits.
    let key: SymmetricKey
    /// The generation of the account key (``EncryptionSettings/keyVersion``).
    public let keyVersion: Int

    init(key: SymmetricKey, keyVersion: Int) {
        self.key = key
        self.keyVersion = keyVersion
    }

    /// Derives the account key from a passphrase and the account's settings, and checks it against the
    /// settings' verifier.
    ///
    /// This takes as long as the settings' scrypt parameters ask (tenths of a second at the default): call it
    /// off any thread that must stay responsive.
    ///
    /// - Throws: ``EncryptionError/wrongPassphrase`` when the passphrase is not the one the settings were
    ///   made with; ``EncryptionError/emptyPassphrase`` for an empty one.
    public init(passphrase: String, settings: EncryptionSettings) throws {
        let key = try Self.derive(passphrase: passphrase, salt: settings.salt, parameters: settings.parameters)
        guard settings.verifies(key) else { throw EncryptionError.wrongPassphrase }
        self.init(key: key, keyVersion: settings.keyVersion)
    }

    /// An account key derived before (``rawBytes``), kept by the device so that it need not run scrypt
    /// again; checked against the settings' verifier like a derived one.
    ///
    /// - Throws: ``EncryptionError/wrongPassphrase`` when the bytes are not this account's key.
    public init(rawBytes: Data, settings: EncryptionSettings) throws {
        let key = SymmetricKey(data: rawBytes)
        guard rawBytes.count == 32, settings.verifies(key) else { throw EncryptionError.wrongPassphrase }
        self.init(key: key, keyVersion: settings.keyVersion)
    }

    /// The key's 32 bytes, for the device to keep where it keeps the passphrase (never for the server).
    public var rawBytes: Data { key.withUnsafeBytes { Data($0) } }

    /// Names the key derived from `passphrase` with `settings`, without revealing either: a keeper of
    /// derived keys files them under it, so a new passphrase or new settings never find an old key.
    public static func derivationID(passphrase: String, settings: EncryptionSettings) -> String {
        var hash = SHA256()
        for part in [
            normalised(passphrase), settings.salt, settings.verifier,
            Data(
                "\(settings.parameters.costN).\(settings.parameters.blockSizeR).\(settings.parameters.parallelismP).\(settings.keyVersion)"
                    .utf8),
        ] {
            withUnsafeBytes(of: UInt64(part.count).bigEndian) { hash.update(bufferPointer: $0) }
            hash.update(data: part)
        }
        return lowercaseHexadecimal(hash.finalize())
    }

    /// `passphrase` in Unicode NFC, as scrypt takes it. ASCII is its own NFC, and most passphrases
    /// (generated ones always) are ASCII: they skip Foundation's normalisation, whose first use in a process
    /// costs about a millisecond.
    static func normalised(_ passphrase: String) -> Data {
        if passphrase.utf8.allSatisfy({ $0 < 0x80 }) { return Data(passphrase.utf8) }
        return Data(passphrase.precomposedStringWithCanonicalMapping.utf8)
    }

    /// scrypt over the passphrase in Unicode NFC, so that "é" typed as one code point on one system and as
    /// "e" plus a combining accent on another derives the same key.
    static func derive(passphrase: String, salt: Data, parameters: ScryptParameters) throws -> SymmetricKey {
        let normalised = normalised(passphrase)
        // Also keeps swift-crypto from being handed an empty buffer, whose base address it force-unwraps.
        guard !normalised.isEmpty else { throw EncryptionError.emptyPassphrase }
        do {
            return try KDF.Scrypt.deriveKey(
                from: normalised, salt: salt, outputByteCount: 32, rounds: parameters.costN,
                blockSize: parameters.blockSizeR, parallelism: parameters.parallelismP)
        } catch {
            // ScryptParameters keeps N, r and p within what BoringSSL accepts, so this is an allocation failure.
            throw EncryptionError(
                .invalidSettings,
                "deriving the account key failed (\(error)); the device may be short of memory: close other "
                    + "programs and try again")
        }
    }
}
