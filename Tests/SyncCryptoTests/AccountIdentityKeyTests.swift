import Foundation
import SyncCrypto
import Testing

/// The account's private key is on the server only wrapped by the account key, and opens only as the
/// private half of the account's published public key.
@Suite struct AccountIdentityKeyTests {
    @Test func aWrappedPrivateKeyOpensWithTheAccountKeyAndMatchesItsPublicKey() throws {
        let (_, accountKey) = try TestAccount.make()
        let identity = AccountIdentityKey.generate()
        let wrapped = identity.wrappedPrivateKey(by: accountKey)
        let opened = try AccountIdentityKey(unwrapping: wrapped, publicKey: identity.publicKey, with: accountKey)
        #expect(opened.publicKey == identity.publicKey)
        #expect(AccountIdentityKey.isPublicKey(identity.publicKey))
    }

    @Test func anotherPassphrasesAccountKeyDoesNotOpenIt() throws {
        let (_, accountKey) = try TestAccount.make()
        let (_, other) = try TestAccount.make(passphrase: "another passphrase")
        let identity = AccountIdentityKey.generate()
        let error = #expect(throws: EncryptionError.self) {
            try AccountIdentityKey(
                unwrapping: identity.wrappedPrivateKey(by: accountKey), publicKey: identity.publicKey, with: other)
        }
        #expect(error?.code == .damaged)
    }

    /// A server swapping in its own public key beside the account's wrapped private key (so that owners
    /// wrap to the server's key) is noticed by the account's own devices.
    @Test func aWrappedPrivateKeyBesideAnotherPublicKeyDoesNotOpen() throws {
        let (_, accountKey) = try TestAccount.make()
        let identity = AccountIdentityKey.generate()
        let error = #expect(throws: EncryptionError.self) {
            try AccountIdentityKey(
                unwrapping: identity.wrappedPrivateKey(by: accountKey),
                publicKey: AccountIdentityKey.generate().publicKey, with: accountKey)
        }
        #expect(error?.code == .damaged)
    }

    @Test func aWrappedPrivateKeyWithAnyByteFlippedDoesNotOpen() throws {
        let (_, accountKey) = try TestAccount.make()
        let identity = AccountIdentityKey.generate()
        let wrapped = identity.wrappedPrivateKey(by: accountKey)
        for index in wrapped.indices {
            var flipped = wrapped
            flipped[index] ^= 0x01
            let error = #expect(throws: EncryptionError.self, "byte \(index)") {
                try AccountIdentityKey(unwrapping: flipped, publicKey: identity.publicKey, with: accountKey)
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

    @Test func anotherGenerationOfTheAccountKeyIsToldApart() throws {
        let (_, first) = try TestAccount.make(keyVersion: 1)
        let (_, second) = try TestAccount.make(keyVersion: 2)
        let identity = AccountIdentityKey.generate()
        let error = #expect(throws: EncryptionError.self) {
            try AccountIdentityKey(
                unwrapping: identity.wrappedPrivateKey(by: first), publicKey: identity.publicKey, with: second)
        }
        #expect(error?.code == .keyVersionMismatch)
        #expect(error?.message.contains("enter the passphrase in use on your other devices") == true)
    }
}
