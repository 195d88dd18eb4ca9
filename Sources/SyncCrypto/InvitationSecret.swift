import Crypto
import Foundation

/// The secret of a share's invitation: 256 random bits that travel with the share's URL (in its
/// fragment, which never reaches the server) and open the zone key the owner left with the share.
///
/// A participant opens the zone key with it once, when accepting, and keeps the key wrapped by
/// their own account key from then on.
public struct InvitationSecret: Sendable, Hashable {
    let key: SymmetricKey

    /// A new random secret.
    public static func generate() -> InvitationSecret {
        InvitationSecret(key: SymmetricKey(size: .bits256))
    }

    private init(key: SymmetricKey) {
        self.key = key
    }

    /// The secret from the 32 bytes of ``rawBytes``.
    public init(rawBytes: Data) throws {
        guard rawBytes.count == 32 else {
            throw EncryptionError(
                .damaged,
                "the invitation's key is \(rawBytes.count) bytes long, not 32: the invitation was cut short or altered; ask for it again"
            )
        }
        key = SymmetricKey(data: rawBytes)
    }

    public var rawBytes: Data { key.withUnsafeBytes { Data($0) } }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawBytes == rhs.rawBytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawBytes) }
}

extension ZoneKey {
    /// The format byte of a zone key wrapped by an invitation secret.
    static let invitationFormat: UInt8 = 2

    /// The key sealed under an invitation's secret for the zone `zoneName`, to leave with its share.
    ///
    /// Wrapped form: the format byte (2), the zone key's version (UInt32, big-endian), then AES-GCM's
    /// nonce | ciphertext | tag, authenticating the zone's name and the version.
    public func wrapped(byInvitation secret: InvitationSecret, zoneName: String) -> Data {
        let zoneVersion = UInt32(version)
        var wrapped = Data([Self.invitationFormat])
        SealedBytes.append(zoneVersion, to: &wrapped)
        wrapped.append(
            SealedBytes.seal(
                key.withUnsafeBytes { Data($0) }, using: secret.key,
                authenticating: Self.invitationContext(zoneName: zoneName, zoneVersion: zoneVersion)))
        return wrapped
    }

    /// Opens a zone key wrapped by ``wrapped(byInvitation:zoneName:)``.
    ///
    /// - Throws: ``EncryptionError/Code/damaged`` when it does not open: the wrong invitation, or an
    ///   altered one.
    public init(unwrapping wrapped: Data, withInvitation secret: InvitationSecret, zoneName: String) throws {
        let bytes = [UInt8](wrapped)
        let damaged = EncryptionError(
            .damaged,
            "the key of shared zone '\(zoneName)' does not open with this invitation: it belongs to another share or was altered; ask the owner for a new invitation"
        )
        guard bytes.count == 1 + 4 + SealedBytes.overhead + 32, bytes[0] == Self.invitationFormat else {
            throw damaged
        }
        let zoneVersion = SealedBytes.uint32(in: bytes, at: 1)
        guard zoneVersion >= 1,
            let keyBytes = SealedBytes.open(
                bytes[5...], using: secret.key,
                authenticating: Self.invitationContext(zoneName: zoneName, zoneVersion: zoneVersion)),
            keyBytes.count == 32
        else { throw damaged }
        self = try ZoneKey(rawBytes: keyBytes, version: Int(zoneVersion))
    }

    private static func invitationContext(zoneName: String, zoneVersion: UInt32) -> AssociatedData {
        var context = AssociatedData(purpose: "SyncCrypto.invitationKey")
        context.append(invitationFormat)
        context.append(zoneName)
        context.append(zoneVersion)
        return context
    }
}

extension InvitationSecret {
    /// The secret of the share whose URL token is `token`, derived from the zone's key: the owner
    /// can hand out the same invitation again at any time without keeping it anywhere, and nobody
    /// without the zone key can work it out (HKDF-SHA256 is one-way).
    public init(zoneKey: ZoneKey, token: String) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: zoneKey.key, salt: Data(token.utf8), info: Data("SyncCrypto.invitationSecret".utf8),
            outputByteCount: 32)
    }
}
