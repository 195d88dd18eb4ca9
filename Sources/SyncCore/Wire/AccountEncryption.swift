import Foundation

/// What a device needs, besides the passphrase, to derive an account's key for encrypted fields:
/// the answer to `GET /v1/account/encryption` and the body of `PUT /v1/account/encryption`.
///
/// The server stores these as they come and cannot use them: the key is derived (scrypt) from a
/// passphrase the server never sees, and ``verifier`` only lets a device tell whether the key it
/// derived is the right one. Decoding checks every member against its range, so a value read
/// from the network is sane before anything stores it or derives a key with it.
public struct AccountEncryptionSettings: Codable, Sendable, Hashable {
    /// Lengths of ``salt``, in bytes.
    public static let saltByteCountRange: ClosedRange<Int> = 16...64
    /// Values of ``costN``: powers of two within this range.
    public static let costNRange: ClosedRange<Int> = (1 << 10)...(1 << 20)
    /// Values of ``blockSizeR``.
    public static let blockSizeRRange: ClosedRange<Int> = 1...32
    /// Values of ``parallelismP``.
    public static let parallelismPRange: ClosedRange<Int> = 1...16
    /// Values of ``keyVersion``: from 1 to the largest 32-bit signed integer, which every client's
    /// integers hold.
    public static let keyVersionRange: ClosedRange<Int> = 1...Int(Int32.max)
    /// Lengths of ``verifier``, in bytes.
    public static let verifierByteCountRange: ClosedRange<Int> = 1...256

    /// The random salt of the key derivation.
    public var salt: Data
    /// scrypt's cost parameter N, a power of two.
    public var costN: Int
    /// scrypt's block size r.
    public var blockSizeR: Int
    /// scrypt's parallelism p.
    public var parallelismP: Int
    /// The generation of the account key, from 1 (a reset of encrypted data may start another).
    public var keyVersion: Int
    /// Something only the right key opens (a sealed constant), so that a device knows at once
    /// whether a passphrase is right.
    public var verifier: Data
    /// The account's key pair, in answers only (`GET /v1/account/encryption`, and the stored
    /// settings a conflict carries) once a device has published one with
    /// `PUT /v1/account/encryption/key-pair`. Requests that store settings leave it out.
    public var keyPair: AccountKeyPair?
    /// The account's recovery key's public half and its tag, in answers only, once a device set one up
    /// (`PUT /v1/account/encryption/recovery`): a passphrase change seals the new account key to it.
    public var recovery: AccountRecovery?

    /// Creates settings. Values outside their ranges are refused where they are decoded (the
    /// server answers `invalidArguments`); ``problem`` tells beforehand.
    public init(
        salt: Data, costN: Int, blockSizeR: Int, parallelismP: Int, keyVersion: Int, verifier: Data,
        keyPair: AccountKeyPair? = nil, recovery: AccountRecovery? = nil
    ) {
        self.recovery = recovery
        self.salt = salt
        self.costN = costN
        self.blockSizeR = blockSizeR
        self.parallelismP = parallelismP
        self.keyVersion = keyVersion
        self.verifier = verifier
        self.keyPair = keyPair
    }

    /// These settings without the key pair and the recovery key: what derives the account key, which two
    /// devices compare to tell whether they set up the same account key.
    public var withoutKeyPair: AccountEncryptionSettings {
        var settings = self
        settings.keyPair = nil
        settings.recovery = nil
        return settings
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case salt, costN, blockSizeR, parallelismP, keyVersion, verifier, keyPair, recovery
    }

    /// Decodes settings, refusing any member outside its range (the error names the member).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        salt = try container.decode(Data.self, forKey: .salt)
        costN = try container.decode(Int.self, forKey: .costN)
        blockSizeR = try container.decode(Int.self, forKey: .blockSizeR)
        parallelismP = try container.decode(Int.self, forKey: .parallelismP)
        keyVersion = try container.decode(Int.self, forKey: .keyVersion)
        verifier = try container.decode(Data.self, forKey: .verifier)
        keyPair = try container.decodeIfPresentNotNull(AccountKeyPair.self, forKey: .keyPair)
        recovery = try container.decodeIfPresentNotNull(AccountRecovery.self, forKey: .recovery)
        for key in CodingKeys.allCases {
            if let problem = problem(of: key) {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: problem)
            }
        }
    }

    /// What is wrong with these settings, naming the member (`costN: …`), or nil when nothing is.
    public var problem: String? {
        for key in CodingKeys.allCases {
            if let problem = problem(of: key) { return "\(key.stringValue): \(problem)" }
        }
        return nil
    }

    private func problem(of key: CodingKeys) -> String? {
        switch key {
        case .salt:
            Self.saltByteCountRange.contains(salt.count)
                ? nil : "the salt is \(salt.count) bytes long; send \(Self.range(Self.saltByteCountRange)) bytes"
        case .costN:
            Self.costNRange.contains(costN) && costN.nonzeroBitCount == 1
                ? nil
                : "\(costN) is not a power of two from \(Self.costNRange.lowerBound) (2^10) to \(Self.costNRange.upperBound) (2^20)"
        case .blockSizeR:
            Self.blockSizeRRange.contains(blockSizeR)
                ? nil : "\(blockSizeR) is outside \(Self.range(Self.blockSizeRRange))"
        case .parallelismP:
            Self.parallelismPRange.contains(parallelismP)
                ? nil : "\(parallelismP) is outside \(Self.range(Self.parallelismPRange))"
        case .keyVersion:
            Self.keyVersionRange.contains(keyVersion)
                ? nil : "\(keyVersion) is not a key version; send one from \(Self.range(Self.keyVersionRange))"
        case .verifier:
            Self.verifierByteCountRange.contains(verifier.count)
                ? nil
                : "the verifier is \(verifier.count) bytes long; send \(Self.range(Self.verifierByteCountRange)) bytes"
        case .keyPair:
            keyPair?.problem
        case .recovery:
            nil
        }
    }

    private static func range(_ range: ClosedRange<Int>) -> String {
        "\(range.lowerBound) to \(range.upperBound)"
    }
}

/// An account's X25519 key pair as the server keeps it: the public key, which the server hands to
/// anyone who looks the account up (so that sharing can wrap a zone key to it), and the private
/// key wrapped (sealed) by the account key, which only the account's devices can open.
///
/// The body of `PUT /v1/account/encryption/key-pair`, and ``AccountEncryptionSettings/keyPair``.
/// Decoding checks both lengths, so a value read from the network is sane before anything
/// stores it or wraps a key to it.
public struct AccountKeyPair: Codable, Sendable, Hashable {
    /// The length of ``publicKey``: an X25519 public key is 32 bytes.
    public static let publicKeyByteCount = 32
    /// Lengths of ``wrappedPrivateKey``, in bytes: room for any wrapping of a 32-byte key.
    public static let wrappedPrivateKeyByteCountRange: ClosedRange<Int> = 1...512

    /// The X25519 public key, 32 bytes.
    public var publicKey: Data
    /// The private key sealed by the account key; opaque to the server.
    public var wrappedPrivateKey: Data

    /// Creates a key pair. Lengths outside their ranges are refused where they are decoded (the
    /// server answers `invalidArguments`); ``problem`` tells beforehand.
    public init(publicKey: Data, wrappedPrivateKey: Data) {
        self.publicKey = publicKey
        self.wrappedPrivateKey = wrappedPrivateKey
    }

    private enum CodingKeys: String, CodingKey {
        case publicKey, wrappedPrivateKey
    }

    /// Decodes a key pair, refusing a length outside its range (the error names the member).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        publicKey = try container.decode(Data.self, forKey: .publicKey)
        wrappedPrivateKey = try container.decode(Data.self, forKey: .wrappedPrivateKey)
        if let problem = Self.problem(publicKey: publicKey) {
            throw DecodingError.dataCorruptedError(forKey: .publicKey, in: container, debugDescription: problem)
        }
        if let problem = Self.problem(wrappedPrivateKey: wrappedPrivateKey) {
            throw DecodingError.dataCorruptedError(
                forKey: .wrappedPrivateKey, in: container, debugDescription: problem)
        }
    }

    /// What is wrong with this key pair, naming the member, or nil when nothing is.
    public var problem: String? {
        Self.problem(publicKey: publicKey).map { "publicKey: \($0)" }
            ?? Self.problem(wrappedPrivateKey: wrappedPrivateKey).map { "wrappedPrivateKey: \($0)" }
    }

    /// Why `publicKey` cannot be a public key, or nil if it can.
    public static func problem(publicKey: Data) -> String? {
        publicKey.count == publicKeyByteCount
            ? nil
            : "the public key is \(publicKey.count) bytes long; an X25519 public key is \(publicKeyByteCount) bytes"
    }

    /// Why `wrappedPrivateKey` cannot be a wrapped private key, or nil if it can.
    public static func problem(wrappedPrivateKey: Data) -> String? {
        wrappedPrivateKeyByteCountRange.contains(wrappedPrivateKey.count)
            ? nil
            : "the wrapped private key is \(wrappedPrivateKey.count) bytes long; send \(wrappedPrivateKeyByteCountRange.lowerBound) to \(wrappedPrivateKeyByteCountRange.upperBound) bytes"
    }
}

/// The answer to `POST /v1/account/encryption/reset`: the encryption settings are gone, and so
/// are these zones (every zone that had an encryption key), each deleted with the reason
/// `encryptedDataReset`.
public struct EncryptedDataResetResponse: Codable, Sendable, Hashable {
    /// The zones the reset deleted, sorted by name.
    public var deletedZoneIDs: [RecordZone.ID]

    public init(deletedZoneIDs: [RecordZone.ID]) {
        self.deletedZoneIDs = deletedZoneIDs
    }
}

/// The public half of an account's recovery key and the tag that binds it to the account (an HMAC under
/// the account key), as ``AccountEncryptionSettings/recovery`` answers them.
public struct AccountRecovery: Codable, Sendable, Hashable {
    /// The recovery key pair's X25519 public key, 32 bytes.
    public var publicKey: Data
    /// HMAC-SHA256 of the public key under the account key, 32 bytes: only the account's devices make it.
    public var keyTag: Data
    /// HMAC-SHA256 under a key only the recovery key derives, over the account's user record name and
    /// public key, 32 bytes: made at setup and kept as it is by passphrase changes.
    public var bindingTag: Data

    public init(publicKey: Data, keyTag: Data, bindingTag: Data) {
        self.publicKey = publicKey
        self.keyTag = keyTag
        self.bindingTag = bindingTag
    }

    private enum CodingKeys: String, CodingKey {
        case publicKey, keyTag, bindingTag
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        publicKey = try container.decode(Data.self, forKey: .publicKey)
        keyTag = try container.decode(Data.self, forKey: .keyTag)
        bindingTag = try container.decode(Data.self, forKey: .bindingTag)
        if let problem = AccountKeyPair.problem(publicKey: publicKey) {
            throw DecodingError.dataCorruptedError(forKey: .publicKey, in: container, debugDescription: problem)
        }
        for (key, tag) in [(CodingKeys.keyTag, keyTag), (.bindingTag, bindingTag)] where tag.count != 32 {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "the tag is \(tag.count) bytes long; send 32")
        }
    }
}

/// A recovery key as a device sends it: the public key and its tag (``AccountRecovery``), the account key
/// sealed to the public key (opaque to the server), and the SHA-256 of the recovery key's verifier, which
/// the server compares a shown verifier's with before it hands the sealed key out.
///
/// In `PUT /v1/account/encryption/recovery` (a new recovery key: every member), and in a passphrase
/// change (`POST /v1/account/encryption/change`), where the new account key is sealed again to the
/// account's recovery key: `verifierHash` is then left out and the public key is the stored one, unless
/// the change replaces the recovery key (after a recovery).
public struct RecoverySetup: Codable, Sendable, Hashable {
    /// Lengths of ``sealedAccountKey``, in bytes.
    public static let sealedAccountKeyByteCountRange: ClosedRange<Int> = 1...512

    public var recovery: AccountRecovery
    public var sealedAccountKey: Data
    /// 32 bytes; nil keeps the stored one (the recovery key is the same).
    public var verifierHash: Data?

    public init(recovery: AccountRecovery, sealedAccountKey: Data, verifierHash: Data?) {
        self.recovery = recovery
        self.sealedAccountKey = sealedAccountKey
        self.verifierHash = verifierHash
    }

    private enum CodingKeys: String, CodingKey {
        case recovery, sealedAccountKey, verifierHash
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        recovery = try container.decode(AccountRecovery.self, forKey: .recovery)
        sealedAccountKey = try container.decode(Data.self, forKey: .sealedAccountKey)
        verifierHash = try container.decodeIfPresentNotNull(Data.self, forKey: .verifierHash)
        guard Self.sealedAccountKeyByteCountRange.contains(sealedAccountKey.count) else {
            throw DecodingError.dataCorruptedError(
                forKey: .sealedAccountKey, in: container,
                debugDescription:
                    "the sealed account key is \(sealedAccountKey.count) bytes long; send 1 to \(Self.sealedAccountKeyByteCountRange.upperBound) bytes"
            )
        }
        if let verifierHash, verifierHash.count != 32 {
            throw DecodingError.dataCorruptedError(
                forKey: .verifierHash, in: container,
                debugDescription: "the verifier hash is \(verifierHash.count) bytes long; send 32 (SHA-256)")
        }
    }
}

/// The body of `PUT /v1/account/encryption/recovery`: a new recovery key for the account whose current
/// account key version is `expectedKeyVersion` (the account key it seals).
public struct RecoveryKeyRequest: Codable, Sendable, Hashable {
    public var expectedKeyVersion: Int
    public var setup: RecoverySetup

    public init(expectedKeyVersion: Int, setup: RecoverySetup) {
        self.expectedKeyVersion = expectedKeyVersion
        self.setup = setup
    }
}

/// The body of `POST /v1/account/encryption/recovery/open`: the recovery key's verifier, 32 bytes.
public struct RecoveryOpenRequest: Codable, Sendable, Hashable {
    public var verifier: Data

    public init(verifier: Data) {
        self.verifier = verifier
    }
}

/// The answer of `POST /v1/account/encryption/recovery/open`: the account key sealed to the recovery key.
public struct RecoveryOpenResponse: Codable, Sendable, Hashable {
    public var keyVersion: Int
    public var sealedAccountKey: Data

    public init(keyVersion: Int, sealedAccountKey: Data) {
        self.keyVersion = keyVersion
        self.sealedAccountKey = sealedAccountKey
    }
}
