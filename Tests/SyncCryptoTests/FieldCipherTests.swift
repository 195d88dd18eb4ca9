import Foundation
import Testing

@testable import SyncCrypto

/// An encrypted field's value: opens for its own field of its own record (of its own type) and nowhere else,
/// carries the record's version inside the seal, and its sealed bytes give nothing of it away.
@Suite struct FieldCipherTests {
    /// Where a value lives.
    struct Place: Hashable, Sendable, CustomTestStringConvertible {
        var recordType = "Contact"
        var recordName = "contact-1"
        var zoneName = "Contacts"
        var ownerName = "_alice"
        var fieldName = "phone"
        var testDescription: String { "\(recordType):\(recordName)/\(zoneName)/\(ownerName)/\(fieldName)" }
    }

    static let home = Place()
    static let phone = Data("+44 20 7946 0958, Ada Lovelace".utf8)

    static func seal(
        _ plaintext: Data, with cipher: FieldCipher, at place: Place = home, recordVersion: UInt64 = 7
    ) -> Data {
        cipher.seal(
            plaintext, recordVersion: recordVersion, recordType: place.recordType, recordName: place.recordName,
            zoneName: place.zoneName, ownerName: place.ownerName, fieldName: place.fieldName)
    }

    static func open(_ sealed: Data, with cipher: FieldCipher, at place: Place = home) throws -> Data {
        try openWithVersion(sealed, with: cipher, at: place).value
    }

    static func openWithVersion(
        _ sealed: Data, with cipher: FieldCipher, at place: Place = home
    ) throws -> FieldCipher.Opened {
        try cipher.open(
            sealed, recordType: place.recordType, recordName: place.recordName, zoneName: place.zoneName,
            ownerName: place.ownerName, fieldName: place.fieldName)
    }

    @Test(arguments: [Data(), Data([0]), phone, Data("名前 👩‍💻".utf8), Data((0..<100_000).map { UInt8($0 % 251) })])
    func aValueRoundTrips(_ plaintext: Data) throws {
        let cipher = FieldCipher(zoneKey: try ZoneKey.generate(version: 3))
        let sealed = Self.seal(plaintext, with: cipher)
        #expect(try Self.open(sealed, with: cipher) == plaintext)
        // Format byte, key version 3 big-endian, nonce, ciphertext as long as the record version and the value,
        // tag.
        #expect(Array(sealed.prefix(5)) == [2, 0, 0, 0, 3])
        #expect(sealed.count == 5 + 12 + 8 + plaintext.count + 16)
        #expect(try FieldCipher.keyVersion(of: sealed) == 3)
    }

    @Test func theSealedBytesDoNotContainThePlaintext() throws {
        let cipher = FieldCipher(zoneKey: try ZoneKey.generate())
        let sealed = Self.seal(Self.phone, with: cipher)
        #expect(sealed.range(of: Self.phone) == nil)
        for word in ["Lovelace", "7946", "+44"] {
            #expect(sealed.range(of: Data(word.utf8)) == nil, "\(word)")
            #expect(!sealed.base64EncodedString().contains(Data(word.utf8).base64EncodedString()), "\(word)")
        }
    }

    @Test func sealingTheSameValueTwiceGivesDifferentBytes() throws {
        let cipher = FieldCipher(zoneKey: try ZoneKey.generate())
        let first = Self.seal(Self.phone, with: cipher)
        let second = Self.seal(Self.phone, with: cipher)
        #expect(first != second)
        #expect(first.dropFirst(5).prefix(12) != second.dropFirst(5).prefix(12))  // the nonces
        #expect(try Self.open(first, with: cipher) == Self.phone)
        #expect(try Self.open(second, with: cipher) == Self.phone)
    }

    static let elsewhere: [Place] = [
        Place(recordName: "contact-2"),
        Place(zoneName: "Work"),
        Place(ownerName: "_bob"),
        Place(fieldName: "email"),
        Place(recordName: "Contact-1"),
        Place(fieldName: "phone "),
        // Moving bytes between neighbouring names must not give the same associated data.
        Place(recordName: "contact-1C", zoneName: "ontacts"),
        Place(recordName: "contact-", zoneName: "1Contacts"),
        Place(zoneName: "Contacts_", ownerName: "alice"),
        Place(ownerName: "_alicep", fieldName: "hone"),
        Place(recordName: "", zoneName: "contact-1Contacts"),
        Place(recordType: "AddressBook"),
        Place(
            recordType: "Contact", recordName: "contact-1", zoneName: "Contacts", ownerName: "_alice",
            fieldName: "device"),
        Place(recordType: "Contactc", recordName: "ontact-1"),
        Place(recordType: "", recordName: "Contactcontact-1"),
    ]

    @Test(arguments: elsewhere)
    func aValueCopiedElsewhereDoesNotOpen(_ place: Place) throws {
        let cipher = FieldCipher(zoneKey: try ZoneKey.generate())
        let sealed = Self.seal(Self.phone, with: cipher)
        let error = #expect(throws: EncryptionError.self) { try Self.open(sealed, with: cipher, at: place) }
        #expect(error?.code == .damaged)
        #expect(
            error?.message
                == "the value of field '\(place.fieldName)' of \(place.recordType) record '\(place.recordName)' in zone "
                + "'\(place.zoneName)' (owner '\(place.ownerName)') does not open: it was altered, damaged, or "
                + "copied from another field, record, record type or zone; fetch the record again, or save a new value")
    }

    @Test func aValueWithAnyByteFlippedDoesNotOpen() throws {
        let cipher = FieldCipher(zoneKey: try ZoneKey.generate(version: 1))
        let sealed = Self.seal(Self.phone, with: cipher)
        for index in sealed.indices {
            var flipped = sealed
            flipped[index] ^= 0x80
            let error = #expect(throws: EncryptionError.self, "byte \(index)") {
                try Self.open(flipped, with: cipher)
            }
            let expected: EncryptionError.Code =
                switch index {
                case 0: .unsupportedFormat
                case 1...4: .keyVersionMismatch
                default: .damaged
                }
            #expect(error?.code == expected, "byte \(index)")
        }
    }

    @Test func aTruncatedOrExtendedValueDoesNotOpen() throws {
        let cipher = FieldCipher(zoneKey: try ZoneKey.generate())
        let sealed = Self.seal(Self.phone, with: cipher)
        let damagedValues = [
            Data(), sealed.prefix(1), sealed.prefix(5), sealed.prefix(32), sealed.dropLast(), sealed + [0],
        ]
        for damaged in damagedValues {
            let error = #expect(throws: EncryptionError.self, "\(damaged.count) bytes") {
                try Self.open(damaged, with: cipher)
            }
            #expect(error?.code == .damaged, "\(damaged.count) bytes")
        }
    }

    @Test func anotherZoneKeyOfTheSameVersionDoesNotOpen() throws {
        let sealed = Self.seal(Self.phone, with: FieldCipher(zoneKey: try ZoneKey.generate(version: 1)))
        let other = FieldCipher(zoneKey: try ZoneKey.generate(version: 1))
        let error = #expect(throws: EncryptionError.self) { try Self.open(sealed, with: other) }
        #expect(error?.code == .damaged)
    }

    @Test func aValueSealedWithAnotherKeyVersionSaysWhichToFetch() throws {
        let sealed = Self.seal(Self.phone, with: FieldCipher(zoneKey: try ZoneKey.generate(version: 2)))
        let current = FieldCipher(zoneKey: try ZoneKey.generate(version: 3))
        let error = #expect(throws: EncryptionError.self) { try Self.open(sealed, with: current) }
        #expect(error?.code == .keyVersionMismatch)
        #expect(
            error?.message
                == "the value of field 'phone' of Contact record 'contact-1' in zone 'Contacts' (owner '_alice') was sealed "
                + "with zone key version 2, but the key at hand is version 3; fetch the zone's key version 2 and "
                + "open it with that")
        #expect(try FieldCipher.keyVersion(of: sealed) == 2)
    }

    @Test func anUnknownFormatAsksForAnUpdate() throws {
        let cipher = FieldCipher(zoneKey: try ZoneKey.generate())
        var sealed = Self.seal(Self.phone, with: cipher)
        sealed[0] = 3
        let error = #expect(throws: EncryptionError.self) { try Self.open(sealed, with: cipher) }
        #expect(error?.code == .unsupportedFormat)
        #expect(
            error?.message.hasSuffix("was sealed in format 3, which this version does not know; update the app") == true
        )
        #expect(throws: EncryptionError.self) { try FieldCipher.keyVersion(of: sealed) }
    }

    @Test func aValueFromASlicedBufferOpens() throws {
        // Data read from a larger buffer keeps its indices; opening must not assume they start at zero.
        let cipher = FieldCipher(zoneKey: try ZoneKey.generate())
        let sealed = Self.seal(Self.phone, with: cipher)
        let buffer = Data([9, 9, 9]) + sealed + Data([9])
        let slice = buffer[3..<(3 + sealed.count)]
        #expect(slice.startIndex == 3)
        #expect(try Self.open(slice, with: cipher) == Self.phone)
        #expect(try FieldCipher.keyVersion(of: slice) == 1)
    }

    @Test(arguments: [UInt64(0), 1, 2, 1_732_000_000_123, UInt64.max])
    func theRecordVersionComesBackFromInsideTheSeal(_ version: UInt64) throws {
        let cipher = FieldCipher(zoneKey: try ZoneKey.generate())
        let sealed = Self.seal(Self.phone, with: cipher, recordVersion: version)
        let opened = try Self.openWithVersion(sealed, with: cipher)
        #expect(opened == FieldCipher.Opened(recordVersion: version, value: Self.phone))
        // Not readable from outside: the version's bytes are not in the clear after the header.
        #expect(sealed.count == 5 + 12 + 8 + Self.phone.count + 16)
    }

    @Test func aValueRelabelledWithAnotherKeyVersionDoesNotOpenUnderThatVersion() throws {
        // A hostile server rewrites the header's key version to 2, to have the value opened with the key of
        // version 2: the associated data binds the version, so it does not open even with the right bytes.
        let raw = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        var sealed = Self.seal(Self.phone, with: FieldCipher(zoneKey: try ZoneKey(rawBytes: raw, version: 1)))
        sealed[4] = 2
        let relabelled = FieldCipher(zoneKey: try ZoneKey(rawBytes: raw, version: 2))
        let error = #expect(throws: EncryptionError.self) { try Self.open(sealed, with: relabelled) }
        #expect(error?.code == .damaged)
    }

    @Test func aValueSealedInFormat1ByEarlierVersionsOpensAsRecordVersion0() throws {
        // Format 1, as earlier versions sealed it: no record version inside, no record type in the
        // associated data.
        let key = try ZoneKey.generate(version: 4)
        let place = Self.home
        var sealed = Data([1, 0, 0, 0, 4])
        let context = FieldCipher.context(
            format: 1, recordType: "ignored", recordName: place.recordName, zoneName: place.zoneName,
            ownerName: place.ownerName, fieldName: place.fieldName, version: 4)
        sealed.append(SealedBytes.seal(Self.phone, using: key.key, authenticating: context))
        let cipher = FieldCipher(zoneKey: key)
        #expect(
            try Self.openWithVersion(sealed, with: cipher) == FieldCipher.Opened(recordVersion: 0, value: Self.phone))
        #expect(try FieldCipher.keyVersion(of: sealed) == 4)
        // Still bound to its record, field and zone.
        #expect(throws: EncryptionError.self) { try Self.open(sealed, with: cipher, at: Place(fieldName: "email")) }
        // A format-2 value relabelled as format 1 does not open (the associated data binds the format).
        var downgraded = Self.seal(Self.phone, with: cipher)
        downgraded[0] = 1
        let error = #expect(throws: EncryptionError.self) { try Self.open(downgraded, with: cipher) }
        #expect(error?.code == .damaged)
    }
}
