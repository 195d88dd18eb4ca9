import ContactsModel
import Foundation
import SyncCore
import SyncKit

/// Changing the passphrase of the account's encrypted contacts, from a device that has the current one.
extension DeviceAccount {
    /// Changes the account's passphrase to `newPassphrase`: the keys of every book, of the books others
    /// share with this account, and the account's key pair are wrapped again under it on the server, in
    /// one request; no contact is encrypted again. This device keeps the new passphrase; the account's
    /// other devices say, at their next sync, that the passphrase changed, and keep their contacts and
    /// pending changes until they are given the new one.
    public func changePassphrase(to newPassphrase: String) async throws {
        let token = try signedInToken()
        guard let current = try passphrase() else {
            throw DeviceError.noPassphraseToChange
        }
        guard newPassphrase != current else {
            throw DeviceError.samePassphrase
        }
        let container = Container(
            identifier: "contacts", serverURL: options.serverURL, credentials: .token(token), keyring: keyring(current))
        do {
            try await container.changePassphrase(to: newPassphrase)
        } catch let error as SyncError where SyncProblem.needsPassphrase(error) {
            throw DeviceError.passphraseChangedElsewhere
        }
        try store.setSetting(.passphrase, newPassphrase)
        // The engines' keyring holds the old passphrase: new engines, with a keyring of the new one.
        await replaceEngine()
        announce(.accountChanged)
    }
}
