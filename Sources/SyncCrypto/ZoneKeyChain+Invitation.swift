import Crypto
import Foundation

/// A public link share's keys: anyone with the link may join, so the chain is wrapped by the link's
/// ``InvitationSecret`` (in the URL's fragment, which never reaches the server), derived from the newest
/// zone key: a rotation retires every earlier link.
///
/// Wrapped form (format 6): a format byte, the newest version (UInt32, big-endian), then AES-GCM's
/// nonce | ciphertext | tag over ``KeyChainEncoding`` (the keys only), authenticating the zone's name and the
/// newest version. A single key of format 2 (shares made before chains) opens as a chain of one.
extension ZoneKeyChain {
    /// The format byte of a chain wrapped by an invitation secret.
    public static let invitationFormat: UInt8 = 6

    /// The link secret of the share with URL token `token`: derived from the newest key.
    public func invitationSecret(token: String) -> InvitationSecret {
        InvitationSecret(zoneKey: newest, token: token)
    }

    /// The chain's keys sealed under `secret` for the zone `zoneName`, to leave with its link share.
    public func wrapped(byInvitation secret: InvitationSecret, zoneName: String) -> Data {
        let newestVersion = UInt32(newest.version)
        var wrapped = Data([Self.invitationFormat])
        SealedBytes.append(newestVersion, to: &wrapped)
        // A chain of keys alone always encodes: the initialiser checked them.
        let keysOnly = (try? ZoneKeyChain(keys: keys)) ?? ZoneKeyChain(newest)
        wrapped.append(
            SealedBytes.seal(
                KeyChainEncoding.encode(keysOnly), using: secret.key,
                authenticating: Self.invitationContext(zoneName: zoneName, newestVersion: newestVersion)))
        return wrapped
    }

    /// Opens a chain wrapped by ``wrapped(byInvitation:zoneName:)``, or a single key of format 2.
    ///
    /// - Throws: ``EncryptionError/Code/damaged`` when it does not open: the wrong invitation, or an
    ///   altered one.
    public init(unwrapping wrapped: Data, withInvitation secret: InvitationSecret, zoneName: String) throws {
        let bytes = [UInt8](wrapped)
        if bytes.first == ZoneKey.invitationFormat {
            self.init(try ZoneKey(unwrapping: wrapped, withInvitation: secret, zoneName: zoneName))
            return
        }
        let damaged = EncryptionError(
            .damaged,
            "the keys of shared zone '\(zoneName)' do not open with this invitation: it belongs to another share, "
                + "was replaced when the owner changed the keys, or was altered; ask the owner for a new invitation")
        guard bytes.count >= 5 + SealedBytes.overhead, bytes[0] == Self.invitationFormat else { throw damaged }
        let newestVersion = SealedBytes.uint32(in: bytes, at: 1)
        guard
            let plaintext = SealedBytes.open(
                bytes[5...], using: secret.key,
                authenticating: Self.invitationContext(zoneName: zoneName, newestVersion: newestVersion)),
            let chain = KeyChainEncoding.decode(plaintext), chain.newest.version == Int(newestVersion),
            chain.holders.isEmpty, chain.pinnedOwnerKey == nil, chain.shareToken == nil
        else { throw damaged }
        self = chain
    }

    private static func invitationContext(zoneName: String, newestVersion: UInt32) -> AssociatedData {
        var context = AssociatedData(purpose: "SyncCrypto.invitationKeyChain")
        context.append(invitationFormat)
        context.append(zoneName)
        context.append(newestVersion)
        return context
    }
}
