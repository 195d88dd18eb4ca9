import Foundation
import SyncCrypto
import Testing

/// A zone's chain wrapped to one participant (format 4, HPKE auth mode) opens only for that participant,
/// for that zone, and only as wrapped by the owner whose public key the participant pinned.
@Suite struct ParticipantWrapTests {
    let owner = AccountIdentityKey.generate()
    let bob = AccountIdentityKey.generate()
    let chain: ZoneKeyChain

    init() throws {
        chain = try ZoneKeyChain.generate().rotated()
    }

    func wrapToBob(_ chain: ZoneKeyChain? = nil, by owner: AccountIdentityKey? = nil) throws -> Data {
        try (chain ?? self.chain).wrapped(
            toParticipant: bob.publicKey, by: owner ?? self.owner, ownerName: "_alice", participantName: "_bob",
            zoneName: "Family", shareToken: "tok")
    }

    @Test func theParticipantOpensEveryVersionAsComingFromThePinnedOwner() throws {
        let opened = try ZoneKeyChain(
            unwrapping: try wrapToBob(), as: bob, pinnedOwnerKey: owner.publicKey, ownerName: "_alice",
            participantName: "_bob", zoneName: "Family")
        #expect(opened.keys.map(\.version) == [1, 2])
        #expect(opened.agrees(with: chain))
        #expect(opened.pinnedOwnerKey == owner.publicKey)
        #expect(opened.shareToken == "tok")
        #expect(ZoneKeyChain.newestVersion(ofParticipantWrap: try wrapToBob()) == 2)
        for key in chain.keys { #expect(try ZoneKeyChainTests.opens(opened, whatWasSealedBy: key)) }
    }

    /// A hostile server makes its own key pair and wraps a chain of its own to the participant: the
    /// participant, holding the owner's pinned key, refuses it.
    @Test func aChainWrappedByAnyoneButThePinnedOwnerIsRefused() throws {
        let server = AccountIdentityKey.generate()
        let forged = try wrapToBob(try ZoneKeyChain.generate().rotated().rotated(), by: server)
        let error = #expect(throws: EncryptionError.self) {
            try ZoneKeyChain(
                unwrapping: forged, as: bob, pinnedOwnerKey: owner.publicKey, ownerName: "_alice",
                participantName: "_bob", zoneName: "Family")
        }
        #expect(error?.code == .damaged)
        #expect(error?.message.contains("not wrapped by the owner you accepted the share from") == true)
    }

    @Test func anotherParticipantCannotOpenIt() throws {
        let carol = AccountIdentityKey.generate()
        let wrapped = try wrapToBob()
        #expect(throws: EncryptionError.self) {
            try ZoneKeyChain(
                unwrapping: wrapped, as: carol, pinnedOwnerKey: owner.publicKey, ownerName: "_alice",
                participantName: "_bob", zoneName: "Family")
        }
        #expect(throws: EncryptionError.self) {
            try ZoneKeyChain(
                unwrapping: wrapped, as: carol, pinnedOwnerKey: owner.publicKey, ownerName: "_alice",
                participantName: "_carol", zoneName: "Family")
        }
    }

    @Test(arguments: [("_alice", "_bob", "Work"), ("_mallory", "_bob", "Family"), ("_alice", "_carol", "Family")])
    func aWrapPresentedForAnotherZoneOwnerOrParticipantDoesNotOpen(
        ownerName: String, participantName: String, zoneName: String
    ) throws {
        let wrapped = try wrapToBob()
        let error = #expect(throws: EncryptionError.self) {
            try ZoneKeyChain(
                unwrapping: wrapped, as: bob, pinnedOwnerKey: owner.publicKey, ownerName: ownerName,
                participantName: participantName, zoneName: zoneName)
        }
        #expect(error?.code == .damaged)
    }

    @Test func aWrapWithAnyByteFlippedDoesNotOpen() throws {
        let wrapped = try wrapToBob()
        for index in wrapped.indices {
            var flipped = wrapped
            flipped[index] ^= 0x01
            let error = #expect(throws: EncryptionError.self, "byte \(index)") {
                try ZoneKeyChain(
                    unwrapping: flipped, as: bob, pinnedOwnerKey: owner.publicKey, ownerName: "_alice",
                    participantName: "_bob", zoneName: "Family")
            }
            #expect(error?.code == (index == 0 ? .unsupportedFormat : .damaged), "byte \(index)")
        }
    }

    /// A participant's public key that is not a usable X25519 key (as a forging server could send) is
    /// refused rather than wrapped to.
    @Test func aDamagedParticipantKeyIsRefused() throws {
        let error = #expect(throws: EncryptionError.self) {
            try chain.wrapped(
                toParticipant: Data(repeating: 7, count: 5), by: owner, ownerName: "_alice", participantName: "_bob",
                zoneName: "Family", shareToken: nil)
        }
        #expect(error?.code == .damaged)
    }

    /// A link share's chain opens with the link's secret, derived from the newest key: after a rotation
    /// the old link's secret no longer opens the new wrap.
    @Test func aLinkSharesChainOpensWithItsSecretAndARotationRetiresTheOldLink() throws {
        let secret = chain.invitationSecret(token: "tok")
        let wrapped = chain.wrapped(byInvitation: secret, zoneName: "Family")
        let opened = try ZoneKeyChain(unwrapping: wrapped, withInvitation: secret, zoneName: "Family")
        #expect(opened.keys.map(\.version) == [1, 2])
        #expect(opened.agrees(with: chain))
        #expect(throws: EncryptionError.self) {
            try ZoneKeyChain(unwrapping: wrapped, withInvitation: secret, zoneName: "Work")
        }
        let rotated = try chain.rotated()
        let newSecret = rotated.invitationSecret(token: "tok")
        #expect(newSecret != secret)
        let rewrapped = rotated.wrapped(byInvitation: newSecret, zoneName: "Family")
        #expect(throws: EncryptionError.self) {
            try ZoneKeyChain(unwrapping: rewrapped, withInvitation: secret, zoneName: "Family")
        }
        // Links made before chains (format 2, one key) still open.
        let old = chain.newest.wrapped(byInvitation: secret, zoneName: "Family")
        #expect(try ZoneKeyChain(unwrapping: old, withInvitation: secret, zoneName: "Family").keys.count == 1)
    }
}
