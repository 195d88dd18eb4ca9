import Foundation
import SyncCore
import SyncCrypto
import Synchronization

/// The account's X25519 key pair: made by the first device that holds the passphrase and finds none,
/// published with the account (others wrap zone keys to its public half), its private half stored on
/// the server wrapped by the account key.
extension Keyring {
    /// The account's key pair: held, or opened from the account's settings, or made now and published.
    func identityKey(client: DatabaseClient) async throws -> AccountIdentityKey {
        if let identity = keys.withLock({ $0.identity }) { return identity }
        let accountKey = try await accountKey(client: client)
        let stored: AccountKeyPair
        if let existing = try await client.encryptionSettings()?.keyPair {
            stored = existing
        } else {
            let made = AccountIdentityKey.generate()
            // The server keeps the first pair an account gets: when another device published one first,
            // this answers theirs, which this device adopts.
            stored = try await client.createKeyPair(
                AccountKeyPair(publicKey: made.publicKey, wrappedPrivateKey: made.wrappedPrivateKey(by: accountKey)))
        }
        let identity = try Self.opened(stored, with: accountKey)
        keys.withLock { $0.identity = identity }
        return identity
    }

    /// The account's public key, as this device's own private key proves it (not as the server says it):
    /// what ``KeyFingerprint`` shows the person to read to the people they share with. Makes the key pair
    /// when the account has none.
    public func accountPublicKey(for database: Database) async throws -> Data {
        try await identityKey(client: DatabaseClient(database: database)).publicKey
    }

    /// The key pair `stored` as the server keeps it, its private half opened with `accountKey`.
    static func opened(_ stored: AccountKeyPair, with accountKey: AccountKey) throws -> AccountIdentityKey {
        do {
            return try AccountIdentityKey(
                unwrapping: stored.wrappedPrivateKey, publicKey: stored.publicKey, with: accountKey)
        } catch let error as EncryptionError {
            throw SyncError(.internalError, "this account's key pair does not open: \(error.message)")
        }
    }

    /// The signed-in account's user record name (participants' wraps name it).
    func userRecordName(client: DatabaseClient) async throws -> String {
        if let name = keys.withLock({ $0.userRecordName }) { return name }
        let name = try await client.account().userRecordName
        keys.withLock { $0.userRecordName = name }
        return name
    }
}
