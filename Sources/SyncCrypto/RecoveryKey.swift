import Crypto
import Foundation

/// A key a person keeps on paper to open their account after losing the passphrase: 128 random bits with a
/// 16-bit checksum, written as nine proquints (`lusab-babad-…`), shown once and never stored by the app.
///
/// It derives an X25519 key pair and a verifier. The server keeps the pair's public key, the SHA-256 of the
/// verifier, and the account key sealed to the public key (HPKE, base mode): any device that holds the account
/// key seals a new one to it when the passphrase changes, without knowing the recovery key, and only the
/// recovery key opens it. The server hands the sealed account key only to a request that shows the verifier,
/// throttled like a password. A tag under the account key binds the public key to the account, so that a
/// server that swaps in a public key of its own is caught before a new account key is sealed to it.
public struct RecoveryKey: Sendable, Hashable {
    /// The 16 random bytes.
    let entropy: [UInt8]

    /// The format byte of an account key sealed to a recovery key.
    static let sealedFormat: UInt8 = 6
    static let ciphersuite = HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_256)
    /// Header (format, account key version), encapsulated key, the sealed 32-byte key and its tag.
    static let sealedByteCount = 1 + 4 + 32 + 32 + 16

    init(entropy: [UInt8]) {
        self.entropy = entropy
    }

    /// A new random recovery key.
    public static func generate() -> RecoveryKey {
        var generator = SystemRandomNumberGenerator()
        return RecoveryKey(entropy: (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// Reads a recovery key as ``text`` writes it (case, spaces and dashes ignored).
    ///
    /// - Throws: ``EncryptionError/Code/damaged`` for text that is not nine proquints, or whose checksum
    ///   does not match (a word mistyped).
    public init(text: String) throws {
        guard let bytes = Proquint.decode(text), bytes.count == 18 else {
            throw EncryptionError(
                .damaged,
                "a recovery key is nine five-letter words such as lusab-babad-…; this is not one: check what you typed")
        }
        let entropy = Array(bytes[0..<16])
        guard Array(bytes[16..<18]) == Self.checksum(entropy) else {
            throw EncryptionError(
                .damaged, "this recovery key has a word wrong (its checksum does not match): check each word")
        }
        self.init(entropy: entropy)
    }

    /// Nine proquints: the 16 bytes and two of checksum.
    public var text: String { Proquint.encode(entropy + Self.checksum(entropy)) }

    private static func checksum(_ entropy: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: Data("cksync recovery key checksum".utf8) + entropy).prefix(2))
    }

    private func derived(_ label: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: entropy), salt: Data("cksync recovery key v1".utf8),
            info: Data(label.utf8), outputByteCount: 32)
    }

    private var agreementKey: Curve25519.KeyAgreement.PrivateKey {
        // Any 32 bytes are an X25519 private key (clamped when used).
        derived("key pair").withUnsafeBytes { try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Data($0)) }
    }

    /// The public key the server keeps.
    public var publicKey: Data { agreementKey.publicKey.rawRepresentation }

    /// What a device shows the server to be handed the sealed account key.
    public var verifier: Data { derived("verifier").withUnsafeBytes { Data($0) } }

    /// What the server keeps of a verifier, and compares a shown one's with.
    public static func verifierHash(_ verifier: Data) -> Data { Data(SHA256.hash(data: verifier)) }

    /// The account key sealed to the recovery key whose public key is `recoveryPublicKey`, for the account
    /// `userRecordName`.
    ///
    /// - Throws: ``EncryptionError/Code/damaged`` when `recoveryPublicKey` is not an X25519 public key.
    public static func seal(_ accountKey: AccountKey, to recoveryPublicKey: Data, userRecordName: String) throws
        -> Data
    {
        guard let recipient = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: recoveryPublicKey) else {
            throw EncryptionError(
                .damaged, "the account's recovery public key is not an X25519 key: the server sent a damaged one")
        }
        let version = UInt32(accountKey.keyVersion)
        var sealed = Data([sealedFormat])
        SealedBytes.append(version, to: &sealed)
        do {
            var sender = try HPKE.Sender(
                recipientKey: recipient, ciphersuite: ciphersuite,
                info: Data(info(userRecordName: userRecordName, version: version).bytes))
            sealed.append(sender.encapsulatedKey)
            sealed.append(try sender.seal(accountKey.rawBytes, authenticating: sealed))
            return sealed
        } catch {
            throw EncryptionError(
                .damaged, "the account key cannot be sealed to the recovery public key (\(error)): it is not usable")
        }
    }

    /// Opens an account key sealed by ``seal(_:to:userRecordName:)`` and checks it against the account's
    /// current settings.
    ///
    /// - Throws: ``EncryptionError/Code/damaged`` when it does not open with this recovery key, or is for
    ///   another account; ``EncryptionError/Code/keyVersionMismatch`` when it is not the key of `settings`
    ///   (an older one the server kept).
    public func open(_ sealed: Data, userRecordName: String, settings: EncryptionSettings) throws -> AccountKey {
        let bytes = [UInt8](sealed)
        let damaged = EncryptionError(
            .damaged,
            "the account key kept for recovery does not open with this recovery key: it is another recovery key's, or was altered"
        )
        guard bytes.count == Self.sealedByteCount, bytes[0] == Self.sealedFormat else { throw damaged }
        let version = SealedBytes.uint32(in: bytes, at: 1)
        guard
            var recipient = try? HPKE.Recipient(
                privateKey: agreementKey, ciphersuite: Self.ciphersuite,
                info: Data(Self.info(userRecordName: userRecordName, version: version).bytes),
                encapsulatedKey: Data(bytes[5..<37])),
            let raw = try? recipient.open(bytes[37...], authenticating: bytes[..<37])
        else { throw damaged }
        guard Int(version) == settings.keyVersion, let key = try? AccountKey(rawBytes: raw, settings: settings) else {
            throw EncryptionError(
                .keyVersionMismatch,
                "the account key kept for recovery is not the account's current one (version \(version), the account has \(settings.keyVersion)): the server kept an old one; recover on a device that still has the passphrase, or ask the server's operator"
            )
        }
        return key
    }

    /// Binds `recoveryPublicKey` to the account: an HMAC under the account key, which only its devices hold.
    public static func tag(recoveryPublicKey: Data, by accountKey: AccountKey) -> Data {
        Data(
            HMAC<SHA256>.authenticationCode(
                for: tagContext(recoveryPublicKey, accountKey).bytes, using: accountKey.key))
    }

    /// Whether `tag` binds `recoveryPublicKey` to the account whose key is `accountKey`.
    public static func checkTag(_ tag: Data, recoveryPublicKey: Data, by accountKey: AccountKey) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(
            tag, authenticating: tagContext(recoveryPublicKey, accountKey).bytes, using: accountKey.key)
    }

    /// Binds the recovery key to the account it was made for: an HMAC under a key only the recovery key
    /// derives, over the account's user record name and public key (which a passphrase change never
    /// replaces). Made once, at setup; a recovery checks it, so that an account key a server made up and
    /// sealed to the recovery key's public half (anyone can seal to it) is refused.
    public func bindingTag(userRecordName: String, accountPublicKey: Data) -> Data {
        Data(
            HMAC<SHA256>.authenticationCode(
                for: Self.bindingContext(userRecordName, accountPublicKey).bytes, using: derived("binding")))
    }

    /// Whether `tag` is this recovery key's ``bindingTag(userRecordName:accountPublicKey:)``.
    public func checkBinding(_ tag: Data, userRecordName: String, accountPublicKey: Data) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(
            tag, authenticating: Self.bindingContext(userRecordName, accountPublicKey).bytes,
            using: derived("binding"))
    }

    private static func bindingContext(_ userRecordName: String, _ accountPublicKey: Data) -> AssociatedData {
        var context = AssociatedData(purpose: "SyncCrypto.recoveryBinding")
        context.append(userRecordName)
        context.append(accountPublicKey)
        return context
    }

    private static func tagContext(_ recoveryPublicKey: Data, _ accountKey: AccountKey) -> AssociatedData {
        var context = AssociatedData(purpose: "SyncCrypto.recoveryPublicKey")
        context.append(UInt32(accountKey.keyVersion))
        context.append(recoveryPublicKey)
        return context
    }

    private static func info(userRecordName: String, version: UInt32) -> AssociatedData {
        var info = AssociatedData(purpose: "SyncCrypto.recoveryAccountKey")
        info.append(userRecordName)
        info.append(version)
        return info
    }
}
