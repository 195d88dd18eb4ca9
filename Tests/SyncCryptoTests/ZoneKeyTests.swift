import Foundation
import SyncCrypto
import Testing

/// A zone key travels to the server only wrapped by the account key, and opens only for its own zone.
@Suite struct ZoneKeyTests {
    /// Whether `key` opens what `original` sealed: the observable meaning of "the same zone key".
    static func opensWhatWasSealed(by original: ZoneKey, with key: ZoneKey) throws -> Bool {
        let sealed = FieldCipher(zoneKey: original).seal(
            Data("Ada".utf8), recordVersion: 1, recordType: "Contact", recordName: "r", zoneName: "Contacts",
            ownerName: "_alice", fieldName: "name")
        let opened = try? FieldCipher(zoneKey: key).open(
            sealed, recordType: "Contact", recordName: "r", zoneName: "Contacts", ownerName: "_alice", fieldName: "name"
        )
        return opened?.value == Data("Ada".utf8)
    }

    @Test func aWrappedZoneKeyUnwrapsToTheSameKeyAndVersion() throws {
        let (_, accountKey) = try TestAccount.make()
        let zoneKey = try ZoneKey.generate(version: 7)
        let wrapped = zoneKey.wrapped(by: accountKey, zoneName: "Contacts", ownerName: "_alice")
        let unwrapped = try ZoneKey(unwrapping: wrapped, with: accountKey, zoneName: "Contacts", ownerName: "_alice")
        #expect(unwrapped.version == 7)
        #expect(try Self.opensWhatWasSealed(by: zoneKey, with: unwrapped))
    }

    @Test func twoGeneratedZoneKeysDiffer() throws {
        let first = try ZoneKey.generate(version: 1)
        let second = try ZoneKey.generate(version: 1)
        #expect(try !Self.opensWhatWasSealed(by: first, with: second))
    }

    @Test(arguments: [("Contacts", "_bob"), ("Notes", "_alice"), ("Contact", "s_alice"), ("contacts", "_alice")])
    func aWrappedKeyMovedToAnotherZoneDoesNotOpen(zoneName: String, ownerName: String) throws {
        let (_, accountKey) = try TestAccount.make()
        let wrapped = try ZoneKey.generate().wrapped(by: accountKey, zoneName: "Contacts", ownerName: "_alice")
        let error = #expect(throws: EncryptionError.self) {
            try ZoneKey(unwrapping: wrapped, with: accountKey, zoneName: zoneName, ownerName: ownerName)
        }
        #expect(error?.code == .damaged)
        #expect(error?.message.contains("the key of zone '\(zoneName)' (owner '\(ownerName)') does not open") == true)
    }

    @Test func aWrappedKeyWithAnyByteFlippedDoesNotOpen() throws {
        let (_, accountKey) = try TestAccount.make()
        let wrapped = try ZoneKey.generate().wrapped(by: accountKey, zoneName: "Contacts", ownerName: "_alice")
        #expect(wrapped.count == 69)
        for index in wrapped.indices {
            var flipped = wrapped
            flipped[index] ^= 0x01
            let error = #expect(throws: EncryptionError.self, "byte \(index)") {
                try ZoneKey(unwrapping: flipped, with: accountKey, zoneName: "Contacts", ownerName: "_alice")
            }
            let expected: EncryptionError.Code =
                switch index {
                case 0: .unsupportedFormat
                case 5...8: .keyVersionMismatch  // the account key version
                default: .damaged
                }
            #expect(error?.code == expected, "byte \(index)")
        }
    }

    @Test func aTruncatedOrEmptyWrappedKeyIsDamaged() throws {
        let (_, accountKey) = try TestAccount.make()
        let wrapped = try ZoneKey.generate().wrapped(by: accountKey, zoneName: "Contacts", ownerName: "_alice")
        for damaged in [Data(), wrapped.prefix(1), wrapped.prefix(9), wrapped.dropLast(), wrapped + [0]] {
            let error = #expect(throws: EncryptionError.self, "\(damaged.count) bytes") {
                try ZoneKey(unwrapping: damaged, with: accountKey, zoneName: "Contacts", ownerName: "_alice")
            }
            #expect(error?.code == .damaged, "\(damaged.count) bytes")
        }
    }

    @Test func anotherAccountsKeyDoesNotUnwrap() throws {
        let (_, alice) = try TestAccount.make(passphrase: "alice's words")
        let (_, mallory) = try TestAccount.make(passphrase: "mallory's words")
        let wrapped = try ZoneKey.generate().wrapped(by: alice, zoneName: "Contacts", ownerName: "_alice")
        let error = #expect(throws: EncryptionError.self) {
            try ZoneKey(unwrapping: wrapped, with: mallory, zoneName: "Contacts", ownerName: "_alice")
        }
        #expect(error?.code == .damaged)
    }

    @Test func aKeyWrappedByAnOlderAccountKeyNamesBothVersions() throws {
        let (_, oldKey) = try TestAccount.make(passphrase: "before reset", keyVersion: 1)
        let (_, newKey) = try TestAccount.make(passphrase: "after reset", keyVersion: 2)
        let wrapped = try ZoneKey.generate().wrapped(by: oldKey, zoneName: "Contacts", ownerName: "_alice")
        let error = #expect(throws: EncryptionError.self) {
            try ZoneKey(unwrapping: wrapped, with: newKey, zoneName: "Contacts", ownerName: "_alice")
        }
        #expect(error?.code == .keyVersionMismatch)
        #expect(
            error?.message.contains("wrapped by account key version 1, but this device holds version 2") == true)
    }

    @Test func anUnknownFormatAsksForAnUpdate() throws {
        let (_, accountKey) = try TestAccount.make()
        var wrapped = try ZoneKey.generate().wrapped(by: accountKey, zoneName: "Contacts", ownerName: "_alice")
        wrapped[0] = 2
        let error = #expect(throws: EncryptionError.self) {
            try ZoneKey(unwrapping: wrapped, with: accountKey, zoneName: "Contacts", ownerName: "_alice")
        }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("update the app") == true)
    }

    @Test func versionsOutsideOneToUInt32MaxAreRefused() throws {
        for version in [0, -1, Int(UInt32.max) + 1, .max] {
            let error = #expect(throws: EncryptionError.self) { try ZoneKey.generate(version: version) }
            #expect(error?.code == .invalidKeyVersion)
        }
        #expect(try ZoneKey.generate(version: Int(UInt32.max)).version == Int(UInt32.max))
    }
}
