import Foundation
import SyncCore

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
}
