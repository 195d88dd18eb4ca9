import Crypto
import Foundation

/// What the server may hold for an account's encrypted data: everything a device needs, together with the
/// passphrase, to derive the account key, and nothing that opens anything without the passphrase.
///
/// The ``verifier`` lets a device tell a wrong passphrase at once, before any zone key exists. Settings
/// come back from the network, so every initialiser, decoding included, checks them
/// (``EncryptionError/Code/invalidSettings``) before a key is derived from them.
public struct EncryptionSettings: Codable, Sendable, Hashable {
    /// 32 random bytes, fresh for each account key, so that one guess cannot be tried against many accounts.
    public let salt: Data
    /// The scrypt cost of deriving the account key.
    public let parameters: ScryptParameters
    /// The generation of the account key, from 1: a reset of encrypted data with a new passphrase makes a
    /// new one. It is bound into the verifier and into every wrapped zone key.
    public let keyVersion: Int
    /// AES-GCM seal of a fixed label under the account key (nonce | ciphertext | tag).
    public let verifier: Data

    /// The length of ``salt`` in bytes.
    public static let saltByteCount = 32

    /// The label the verifier seals. Known to everyone: what proves the passphrase is that it opens.
    static let verifierLabel = Data("SyncCrypto account key verifier".utf8)

    /// Creates settings, checking each part (as settings read from the network are checked).
    public init(salt: Data, parameters: ScryptParameters, keyVersion: Int, verifier: Data) throws {
        guard salt.count == Self.saltByteCount else {
            throw EncryptionError.invalidSettings(
                "the salt is \(salt.count) bytes long, not \(Self.saltByteCount)")
        }
        guard keyVersion >= 1, UInt32(exactly: keyVersion) != nil else {
            throw EncryptionError.invalidSettings("account key version \(keyVersion) is outside 1...\(UInt32.max)")
        }
        let verifierByteCount = SealedBytes.overhead + Self.verifierLabel.count
        guard verifier.count == verifierByteCount else {
            throw EncryptionError.invalidSettings(
                "the verifier is \(verifier.count) bytes long, not \(verifierByteCount)")
        }
        self.salt = Data(salt)
        self.parameters = parameters
        self.keyVersion = keyVersion
        self.verifier = Data(verifier)
    }

    /// Makes settings for a new account key: a fresh salt, the key derived from `passphrase`, and its
    /// verifier. The passphrase itself is in neither result.
    ///
    /// - Parameters:
    ///   - passphrase: What the person will type on every device; normalised to Unicode NFC first.
    ///   - parameters: The scrypt cost; ``ScryptParameters/default`` unless a test needs it cheaper.
    ///   - keyVersion: 1 for a new account; the old settings' version + 1 after a reset of encrypted data.
    /// - Returns: The settings to store on the server, and the account key to keep on this device.
    public static func create(
        passphrase: String, parameters: ScryptParameters = .default, keyVersion: Int = 1
    ) throws -> (EncryptionSettings, AccountKey) {
        _ = try SealedBytes.keyVersion(keyVersion)
        let salt = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let key = try AccountKey.derive(
            passphrase: passphrase, salt: salt, parameters: parameters)
        let verifier = SealedBytes.seal(
            verifierLabel, using: key,
            authenticating: verifierContext(salt: salt, parameters: parameters, keyVersion: keyVersion))
        let settings = try EncryptionSettings(
            salt: salt, parameters: parameters, keyVersion: keyVersion, verifier: verifier)
        return (settings, AccountKey(key: key, keyVersion: keyVersion))
    }

    /// Whether `key` is the key these settings were made with.
    func verifies(_ key: SymmetricKey) -> Bool {
        let context = Self.verifierContext(salt: salt, parameters: parameters, keyVersion: keyVersion)
        return SealedBytes.open(verifier, using: key, authenticating: context) == Self.verifierLabel
    }

    /// The verifier is bound to every other part of the settings, so none of them can be swapped alone.
    private static func verifierContext(salt: Data, parameters: ScryptParameters, keyVersion: Int) -> AssociatedData {
        var context = AssociatedData(purpose: "SyncCrypto.verifier")
        context.append(salt)
        context.append(UInt64(parameters.costN))
        context.append(UInt64(parameters.blockSizeR))
        context.append(UInt64(parameters.parallelismP))
        context.append(UInt64(keyVersion))
        return context
    }

    private enum CodingKeys: String, CodingKey {
        case salt
        case parameters
        case keyVersion
        case verifier
    }

    /// Decodes settings and checks them: decoded settings are as safe to derive with as created ones.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            salt: container.decode(Data.self, forKey: .salt),
            parameters: container.decode(ScryptParameters.self, forKey: .parameters),
            keyVersion: container.decode(Int.self, forKey: .keyVersion),
            verifier: container.decode(Data.self, forKey: .verifier)
        )
    }
}
