import Foundation
import SyncCrypto
import Testing

/// A zone's keys as a chain of versions: wrapped under the account key (format 3), opening format 1 as a
/// chain of one, rotating without touching older versions.
@Suite struct ZoneKeyChainTests {
    /// Whether `chain` opens a value that `key` sealed, picking the version the value names.
    static func opens(_ chain: ZoneKeyChain, whatWasSealedBy key: ZoneKey) throws -> Bool {
        let sealed = FieldCipher(zoneKey: key).seal(
            Data("Ada".utf8), recordVersion: 1, recordType: "Contact", recordName: "r", zoneName: "Contacts",
            ownerName: "_alice", fieldName: "name")
        guard let held = chain.key(version: try FieldCipher.keyVersion(of: sealed)) else { return false }
        let opened = try? FieldCipher(zoneKey: held).open(
            sealed, recordType: "Contact", recordName: "r", zoneName: "Contacts", ownerName: "_alice", fieldName: "name"
        )
        return opened?.value == Data("Ada".utf8)
    }

    @Test func aWrappedChainOpensWithEveryVersionItsHoldersAndItsPin() throws {
        let (_, accountKey) = try TestAccount.make()
        var chain = try ZoneKeyChain.generate().rotated().rotated()
        chain.holders = ["_bob", "_carol"]
        chain.pinnedOwnerKey = AccountIdentityKey.generate().publicKey
        chain.shareToken = "token-1"
        let wrapped = chain.wrapped(by: accountKey, zoneName: "Contacts", ownerName: "_alice")
        let opened = try ZoneKeyChain(unwrapping: wrapped, with: accountKey, zoneName: "Contacts", ownerName: "_alice")
        #expect(opened.keys.map(\.version) == [1, 2, 3])
        #expect(opened.newest.version == 3)
        #expect(opened.holders == ["_bob", "_carol"])
        #expect(opened.pinnedOwnerKey == chain.pinnedOwnerKey)
        #expect(opened.shareToken == "token-1")
        for key in chain.keys { #expect(try Self.opens(opened, whatWasSealedBy: key), "version \(key.version)") }
    }

    /// Zones keyed before chains keep opening: their single key is a chain of one.
    @Test func aSingleZoneKeyOfFormatOneOpensAsAChainOfOne() throws {
        let (_, accountKey) = try TestAccount.make()
        let key = try ZoneKey.generate(version: 1)
        let chain = try ZoneKeyChain(
            unwrapping: key.wrapped(by: accountKey, zoneName: "Contacts", ownerName: "_alice"), with: accountKey,
            zoneName: "Contacts", ownerName: "_alice")
        #expect(chain.keys.map(\.version) == [1])
        #expect(try Self.opens(chain, whatWasSealedBy: key))
    }

    @Test func rotationAddsANewKeyAndKeepsTheOldOnes() throws {
        let chain = try ZoneKeyChain.generate()
        var holding = chain
        holding.holders = ["_bob"]
        let rotated = try holding.rotated()
        #expect(rotated.keys.map(\.version) == [1, 2])
        #expect(rotated.holders.isEmpty)
        #expect(try Self.opens(rotated, whatWasSealedBy: chain.newest))
        #expect(try !Self.opens(chain, whatWasSealedBy: rotated.newest))
        #expect(rotated.agrees(with: chain))
    }

    @Test func chainsThatDisagreeOnAVersionDoNotMerge() throws {
        let mine = try ZoneKeyChain.generate().rotated()
        let forged = try ZoneKeyChain.generate().rotated().rotated()
        #expect(!mine.agrees(with: forged))
        let error = #expect(throws: EncryptionError.self) { try mine.merging(forged) }
        #expect(error?.code == .damaged)
        let newer = try mine.rotated()
        let merged = try mine.merging(newer)
        #expect(merged.keys.map(\.version) == [1, 2, 3])
    }

    @Test(arguments: [("Contacts", "_bob"), ("Notes", "_alice"), ("Contact", "s_alice")])
    func aWrappedChainMovedToAnotherZoneDoesNotOpen(zoneName: String, ownerName: String) throws {
        let (_, accountKey) = try TestAccount.make()
        let wrapped = try ZoneKeyChain.generate().rotated().wrapped(
            by: accountKey, zoneName: "Contacts", ownerName: "_alice")
        let error = #expect(throws: EncryptionError.self) {
            try ZoneKeyChain(unwrapping: wrapped, with: accountKey, zoneName: zoneName, ownerName: ownerName)
        }
        #expect(error?.code == .damaged)
    }

    @Test func anotherAccountKeyDoesNotOpenIt() throws {
        let (_, accountKey) = try TestAccount.make()
        let (_, other) = try TestAccount.make(passphrase: "someone else")
        let wrapped = try ZoneKeyChain.generate().wrapped(by: accountKey, zoneName: "Contacts", ownerName: "_alice")
        let error = #expect(throws: EncryptionError.self) {
            try ZoneKeyChain(unwrapping: wrapped, with: other, zoneName: "Contacts", ownerName: "_alice")
        }
        #expect(error?.code == .damaged)
    }

    @Test func aWrappedChainWithAnyByteFlippedDoesNotOpen() throws {
        let (_, accountKey) = try TestAccount.make()
        var chain = try ZoneKeyChain.generate().rotated()
        chain.holders = ["_bob"]
        let wrapped = chain.wrapped(by: accountKey, zoneName: "Contacts", ownerName: "_alice")
        for index in wrapped.indices {
            var flipped = wrapped
            flipped[index] ^= 0x01
            let error = #expect(throws: EncryptionError.self, "byte \(index)") {
                try ZoneKeyChain(unwrapping: flipped, with: accountKey, zoneName: "Contacts", ownerName: "_alice")
            }
            let expected: EncryptionError.Code =
                switch index {
                case 0: .unsupportedFormat
                case 5...8: .keyVersionMismatch
                default: .damaged
                }
            #expect(error?.code == expected, "byte \(index)")
        }
        let truncated = wrapped.dropLast()
        #expect(throws: EncryptionError.self) {
            try ZoneKeyChain(unwrapping: Data(truncated), with: accountKey, zoneName: "Contacts", ownerName: "_alice")
        }
    }
}
