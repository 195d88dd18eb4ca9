import Crypto
import Foundation

/// Wrapping a zone's keys to a participant: HPKE (RFC 9180) in auth mode, X25519 / HKDF-SHA256 /
/// AES-256-GCM, from the owner's private key to the participant's public key. Only the participant
/// opens it, and only as coming from the owner whose public key they pinned: a server that makes its own
/// key pair and wraps its own chain to the participant is refused.
///
/// Wrapped form (format 4): a format byte, the newest version (UInt32, big-endian), HPKE's 32-byte
/// encapsulated key, then the HPKE ciphertext of ``KeyChainEncoding`` (keys and the share's token). HPKE's
/// `info` binds the owner's and participant's user record names, the zone's name and the newest version.
extension ZoneKeyChain {
    /// The format byte of a chain wrapped to a participant.
    static let participantFormat: UInt8 = 4
    /// HPKE's ciphersuite for every participant wrap.
    static let ciphersuite = HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_256)
    /// The length of X25519's encapsulated key.
    static let encapsulatedKeyByteCount = 32

    /// The chain's keys (not its holders or pin), with `shareToken`, sealed to the participant whose public
    /// key is `participantKey`, from `owner`.
    ///
    /// - Parameters:
    ///   - ownerName: the owner's user record name; `participantName`: the participant's.
    /// - Throws: ``EncryptionError/Code/damaged`` when `participantKey` is not an X25519 public key.
    public func wrapped(
        toParticipant participantKey: Data, by owner: AccountIdentityKey, ownerName: String, participantName: String,
        zoneName: String, shareToken: String?
    ) throws -> Data {
        guard let recipient = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: participantKey) else {
            throw EncryptionError(
                .damaged,
                "the public key of participant '\(participantName)' is not an X25519 key: the server sent a damaged one"
            )
        }
        let newestVersion = UInt32(newest.version)
        let info = Self.participantInfo(
            ownerName: ownerName, participantName: participantName, zoneName: zoneName, newestVersion: newestVersion)
        let carried = try ZoneKeyChain(keys: keys, shareToken: shareToken)
        do {
            var sender = try HPKE.Sender(
                recipientKey: recipient, ciphersuite: Self.ciphersuite, info: Data(info.bytes),
                authenticatedBy: owner.privateKey)
            var wrapped = Data([Self.participantFormat])
            SealedBytes.append(newestVersion, to: &wrapped)
            wrapped.append(sender.encapsulatedKey)
            wrapped.append(try sender.seal(KeyChainEncoding.encode(carried), authenticating: wrapped))
            return wrapped
        } catch {
            // X25519 fails only for a public key of small order: one a server forged.
            throw EncryptionError(
                .damaged,
                "the keys of zone '\(zoneName)' cannot be wrapped to participant '\(participantName)': their public "
                    + "key is not usable (\(error)); the server sent a damaged or forged one")
        }
    }

    /// Opens a chain wrapped by ``wrapped(toParticipant:by:ownerName:participantName:zoneName:shareToken:)``
    /// with the participant's key pair, accepting it only as wrapped by the owner whose public key is
    /// `pinnedOwnerKey`. The chain comes back with that pin and the token it carried, and no holders.
    ///
    /// - Throws: ``EncryptionError/Code/damaged`` when it does not open: altered, wrapped to someone else,
    ///   for another zone or owner, or by anyone but the pinned owner;
    ///   ``EncryptionError/Code/unsupportedFormat`` for a format this version does not know.
    public init(
        unwrapping wrapped: Data, as participant: AccountIdentityKey, pinnedOwnerKey: Data, ownerName: String,
        participantName: String, zoneName: String
    ) throws {
        let bytes = [UInt8](wrapped)
        let damaged = EncryptionError(
            .damaged,
            "the keys of shared zone '\(zoneName)' do not open as coming from its owner '\(ownerName)': they were "
                + "altered, wrapped for someone else, or not wrapped by the owner you accepted the share from; ask "
                + "the owner to share the book with you again")
        guard let format = bytes.first else { throw damaged }
        guard format == Self.participantFormat else {
            throw EncryptionError(
                .unsupportedFormat,
                "the keys of shared zone '\(zoneName)' were written in format \(format), which this version does not "
                    + "know; update the app")
        }
        let headerByteCount = 5 + Self.encapsulatedKeyByteCount
        guard bytes.count > headerByteCount,
            let owner = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: pinnedOwnerKey)
        else { throw damaged }
        let newestVersion = SealedBytes.uint32(in: bytes, at: 1)
        let info = Self.participantInfo(
            ownerName: ownerName, participantName: participantName, zoneName: zoneName, newestVersion: newestVersion)
        guard
            var recipient = try? HPKE.Recipient(
                privateKey: participant.privateKey, ciphersuite: Self.ciphersuite, info: Data(info.bytes),
                encapsulatedKey: Data(bytes[5..<headerByteCount]), authenticatedBy: owner),
            let plaintext = try? recipient.open(bytes[headerByteCount...], authenticating: bytes[..<headerByteCount]),
            let carried = KeyChainEncoding.decode(plaintext), carried.newest.version == Int(newestVersion),
            carried.holders.isEmpty, carried.pinnedOwnerKey == nil
        else { throw damaged }
        self = try ZoneKeyChain(keys: carried.keys, pinnedOwnerKey: pinnedOwnerKey, shareToken: carried.shareToken)
    }

    /// The newest version a chain wrapped to a participant names, read without opening it; nil when the
    /// bytes are not such a wrap.
    public static func newestVersion(ofParticipantWrap wrapped: Data) -> Int? {
        let bytes = [UInt8](wrapped)
        guard bytes.count > 5, bytes[0] == participantFormat else { return nil }
        return Int(SealedBytes.uint32(in: bytes, at: 1))
    }

    private static func participantInfo(
        ownerName: String, participantName: String, zoneName: String, newestVersion: UInt32
    ) -> AssociatedData {
        var info = AssociatedData(purpose: "SyncCrypto.participantKeyChain")
        info.append(participantFormat)
        info.append(ownerName)
        info.append(participantName)
        info.append(zoneName)
        info.append(newestVersion)
        return info
    }
}
