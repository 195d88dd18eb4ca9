import Foundation
import SyncCore
import SyncCrypto

extension Container {
    /// Changes the passphrase of the account's encrypted data to `newPassphrase`, from this
    /// container's (which must open the account). Nothing is encrypted again: the keys that seal the
    /// records stay, and only their wrapping under the passphrase's account key changes, for every
    /// zone, every accepted share and the account's key pair, in one request. The account's other
    /// devices are told, and their next sync finds that the passphrase changed; each needs the new one.
    ///
    /// This container's keyring holds the new account key afterwards; containers made later need
    /// `newPassphrase`.
    ///
    /// - Throws: `notAuthenticated` when this container has no passphrase, or its passphrase no longer
    ///   opens the account (another device changed it); `unknownItem` when the account has no
    ///   encrypted data yet.
    @discardableResult
    public func changePassphrase(to newPassphrase: String) async throws -> AccountEncryptionSettings {
        guard let keyring else {
            throw SyncError(
                .notAuthenticated, "this container has no passphrase: make it with the account's current passphrase")
        }
        return try await keyring.changePassphrase(
            to: newPassphrase, client: DatabaseClient(database: privateCloudDatabase),
            shared: DatabaseClient(database: sharedCloudDatabase))
    }

    /// Makes a new recovery key for the account (replacing its old one) and returns it, to show the person
    /// once: written down, it opens the account after the passphrase is lost (``recoverAccount(with:)``).
    /// The server keeps only the account key sealed to it, handed out to a request that shows the key's
    /// verifier; every passphrase change seals the new account key to it.
    public func setUpRecoveryKey() async throws -> RecoveryKey {
        guard let keyring else {
            throw SyncError(
                .notAuthenticated, "this container has no passphrase: make it with the account's current passphrase")
        }
        return try await keyring.setUpRecovery(client: DatabaseClient(database: privateCloudDatabase))
    }

    /// Recovers the account after its passphrase was lost: opens the account key with `recoveryKey` and
    /// makes this container's keyring's passphrase the account's, as ``changePassphrase(to:)`` does (every
    /// record, zone and share stays). Returns the account's new recovery key: the one used is spent.
    public func recoverAccount(with recoveryKey: RecoveryKey) async throws -> RecoveryKey {
        guard let keyring else {
            throw SyncError(
                .notAuthenticated, "make this container with the new passphrase to recover the account with")
        }
        return try await keyring.recover(
            with: recoveryKey, client: DatabaseClient(database: privateCloudDatabase),
            shared: DatabaseClient(database: sharedCloudDatabase)
        ).recoveryKey
    }
}
