import Foundation
import SyncCrypto
import Testing

/// A device that knows the passphrase derives the account key; one that does not is told so at once.
@Suite struct AccountKeyTests {
    /// Whether `key` opens what `original` wrapped: the observable meaning of "the same key".
    static func opensWhatWasWrapped(by original: AccountKey, with key: AccountKey) throws -> Bool {
        let zoneKey = try ZoneKey.generate(version: 1)
        let wrapped = zoneKey.wrapped(by: original, zoneName: "Contacts", ownerName: "_alice")
        let sealed = FieldCipher(zoneKey: zoneKey).seal(
            Data("secret".utf8), recordVersion: 1, recordType: "Contact", recordName: "r", zoneName: "Contacts",
            ownerName: "_alice", fieldName: "f")
        guard let unwrapped = try? ZoneKey(unwrapping: wrapped, with: key, zoneName: "Contacts", ownerName: "_alice")
        else { return false }
        let opened = try FieldCipher(zoneKey: unwrapped).open(
            sealed, recordType: "Contact", recordName: "r", zoneName: "Contacts", ownerName: "_alice", fieldName: "f"
        ).value
        return opened == Data("secret".utf8)
    }

    @Test func aSecondDeviceWithThePassphraseDerivesTheSameKey() throws {
        let (settings, firstDevice) = try TestAccount.make(passphrase: "orbit maple quiet")
        let secondDevice = try AccountKey(passphrase: "orbit maple quiet", settings: settings)
        #expect(secondDevice.keyVersion == settings.keyVersion)
        #expect(try Self.opensWhatWasWrapped(by: firstDevice, with: secondDevice))
    }

    @Test(arguments: ["orbit maple quiet ", "Orbit maple quiet", "orbit maple quiet\n", "orbit  maple quiet", "x"])
    func aWrongPassphraseIsToldAtOnce(_ wrong: String) throws {
        let (settings, _) = try TestAccount.make(passphrase: "orbit maple quiet")
        let error = #expect(throws: EncryptionError.self) { try AccountKey(passphrase: wrong, settings: settings) }
        #expect(error == .wrongPassphrase)
        #expect(error?.code == .wrongPassphrase)
        #expect(
            error?.description
                == "the passphrase does not open this account's encrypted data; enter the passphrase used on your "
                + "other devices, or reset encrypted data (which deletes it)")
    }

    @Test func composedAndDecomposedAccentsDeriveTheSameKey() throws {
        let composed = "cr\u{E8}me br\u{FB}l\u{E9}e"  // è, û, é as single code points (NFC)
        let decomposed = "cre\u{300}me bru\u{302}le\u{301}e"  // base letters plus combining accents (NFD)
        #expect(Array(composed.utf8) != Array(decomposed.utf8))

        let (settings, original) = try TestAccount.make(passphrase: composed)
        let fromDecomposed = try AccountKey(passphrase: decomposed, settings: settings)
        #expect(try Self.opensWhatWasWrapped(by: original, with: fromDecomposed))

        let (otherSettings, otherOriginal) = try TestAccount.make(passphrase: decomposed)
        let fromComposed = try AccountKey(passphrase: composed, settings: otherSettings)
        #expect(try Self.opensWhatWasWrapped(by: otherOriginal, with: fromComposed))
    }

    /// A device files the key it derived under ``AccountKey/derivationID(passphrase:settings:)`` and looks
    /// for it there in the next process, so the name must not change between versions. The expected IDs
    /// were worked out apart from this code (Python's hashlib and unicodedata) as the first version made
    /// them: SHA-256 over each part's length and bytes, the passphrase in NFC, two lowercase digits a byte.
    /// The accented passphrase, typed composed or decomposed, has one ID.
    @Test(arguments: [
        ("orbit maple quiet", "7658f5a84a70530598c862d3a33a712a7a212736532729305459bd721f9479d8"),
        ("cr\u{E8}me br\u{FB}l\u{E9}e", "9039c48318497367edadc0f191b9b7d59e7e3be98b90fd1be228df42b7bfded5"),
        ("cre\u{300}me bru\u{302}le\u{301}e", "9039c48318497367edadc0f191b9b7d59e7e3be98b90fd1be228df42b7bfded5"),
    ])
    func theDerivationIDIsTheOneEarlierVersionsFiledKeysUnder(_ passphrase: String, _ expected: String) throws {
        let settings = try EncryptionSettings(
            salt: Data(repeating: 1, count: 32),
            parameters: ScryptParameters(costN: 1024, blockSizeR: 8, parallelismP: 1),
            keyVersion: 1, verifier: Data(repeating: 2, count: 59))
        #expect(AccountKey.derivationID(passphrase: passphrase, settings: settings) == expected)
    }

    @Test func anEmptyPassphraseIsRefused() throws {
        let created = #expect(throws: EncryptionError.self) { try TestAccount.make(passphrase: "") }
        #expect(created == .emptyPassphrase)

        let (settings, _) = try TestAccount.make()
        let derived = #expect(throws: EncryptionError.self) { try AccountKey(passphrase: "", settings: settings) }
        #expect(derived == .emptyPassphrase)
    }

    @Test func settingsWithAPartSwappedDoNotVerify() throws {
        // A server that changes the salt, cost or version (all still acceptable) gets a refusal, not a key.
        let (settings, _) = try TestAccount.make(passphrase: "orbit maple quiet")
        var raw = try EncryptionSettingsTests.raw(settings)
        var changes: [EncryptionSettingsTests.RawSettings] = []
        raw.keyVersion = 2
        changes.append(raw)
        raw = try EncryptionSettingsTests.raw(settings)
        raw.parameters.parallelismP = 2
        changes.append(raw)
        raw = try EncryptionSettingsTests.raw(settings)
        raw.salt[0] ^= 1
        changes.append(raw)
        raw = try EncryptionSettingsTests.raw(settings)
        raw.verifier[raw.verifier.count - 1] ^= 1
        changes.append(raw)
        for change in changes {
            let changed = try EncryptionSettingsTests.decode(change)
            let error = #expect(throws: EncryptionError.self) {
                try AccountKey(passphrase: "orbit maple quiet", settings: changed)
            }
            #expect(error == .wrongPassphrase)
        }
    }

    @Test func accountKeysOfDifferentAccountsDoNotOpenEachOthersKeys() throws {
        let (_, alice) = try TestAccount.make(passphrase: "same words")
        let (_, bob) = try TestAccount.make(passphrase: "same words")
        #expect(try !Self.opensWhatWasWrapped(by: alice, with: bob))
    }

    @Test func anInvalidKeyVersionIsRefusedWhenCreating() {
        for version in [0, -1, Int(UInt32.max) + 1] {
            let error = #expect(throws: EncryptionError.self) { try TestAccount.make(keyVersion: version) }
            #expect(error?.code == .invalidKeyVersion)
        }
    }
}
