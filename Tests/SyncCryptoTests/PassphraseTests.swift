import Foundation
import SyncCrypto
import Testing

/// The passphrase a zero-setup account makes for itself.
@Suite struct PassphraseTests {
    static let alphabet = Set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    @Test func aGeneratedPassphraseIsSixGroupsOfFiveUnambiguousCharacters() {
        let passphrase = Passphrase.generate()
        let groups = passphrase.split(separator: "-", omittingEmptySubsequences: false)
        #expect(groups.count == 6, "\(passphrase)")
        for group in groups {
            #expect(group.count == 5, "\(passphrase)")
            #expect(group.allSatisfy { Self.alphabet.contains($0) }, "\(passphrase)")
        }
    }

    @Test func generatedPassphrasesUseAllThirtyTwoCharactersAndNeverRepeat() {
        // 30 characters from 32 equally likely ones is 150 bits. Over 200 passphrases (6,000 characters)
        // each character's chance of never appearing is (31/32)^6000, below 10^-82.
        let passphrases = (0..<200).map { _ in Passphrase.generate() }
        #expect(Set(passphrases).count == passphrases.count)
        let seen = Set(passphrases.joined().filter { $0 != "-" })
        #expect(seen == Self.alphabet)
        #expect(Self.alphabet.count == 32)
        #expect(Self.alphabet.isDisjoint(with: "ILOU"))
    }

    @Test func aGeneratedPassphraseOpensItsAccount() throws {
        let passphrase = Passphrase.generate()
        let (settings, _) = try TestAccount.make(passphrase: passphrase)
        _ = try AccountKey(passphrase: passphrase, settings: settings)
        let error = #expect(throws: EncryptionError.self) {
            try AccountKey(passphrase: passphrase.lowercased(), settings: settings)
        }
        #expect(error == .wrongPassphrase)
    }
}
