import ContactsModel
import Foundation
import SyncCore
import SyncCrypto
import SyncKit

/// The account's recovery key: made at sign-up (and at any time after, replacing the old one), shown once,
/// kept by nothing on the device; used on a device whose person lost the passphrase to set a new one,
/// keeping every contact, book and share.
extension DeviceAccount {
    /// Makes a new recovery key for the signed-in account, replacing its old one, and returns it to show
    /// once. Needs the account's passphrase on this device.
    public func setUpRecoveryKey() async throws -> RecoveryKey {
        let token = try signedInToken()
        guard let passphrase = try store.setting(.passphrase) else { throw DeviceError.noPassphrase }
        let container = Container(
            identifier: "contacts", serverURL: options.serverURL, credentials: .token(token),
            keyring: keyring(passphrase))
        do {
            return try await container.setUpRecoveryKey()
        } catch let error as SyncError where error.reason == .passphraseRejected {
            throw DeviceError.passphraseChangedElsewhere
        }
    }

    /// Signs this device in as `username` and recovers the account with `recoveryKey` (as the person wrote
    /// it down): the account key it opens is wrapped anew under `newPassphrase`, which becomes the account's
    /// and this device's. Returns the account's new recovery key (the one used is spent), to show once.
    /// Nothing changes when the key is wrong.
    public func recover(username: String, password: String, recoveryKey text: String, newPassphrase: String)
        async throws -> RecoveryKey
    {
        let recoveryKey: RecoveryKey
        do {
            recoveryKey = try RecoveryKey(text: text)
        } catch let error as EncryptionError {
            throw DeviceError.unreadableRecoveryKey(error.message)
        }
        let session = try await AccountClient(serverURL: options.serverURL).signIn(
            username: username, password: password, deviceLabel: sessionLabel)
        let container = Container(
            identifier: "contacts", serverURL: options.serverURL, credentials: .token(session.token),
            deviceID: try store.setting(.deviceID), keyring: keyring(newPassphrase))
        let next: RecoveryKey
        do {
            next = try await container.recoverAccount(with: recoveryKey)
        } catch {
            try? await AccountClient(serverURL: options.serverURL).signOut(token: session.token)
            if let error = error as? SyncError, error.code == .permissionFailure { throw DeviceError.wrongRecoveryKey }
            if let error = error as? SyncError, error.code == .unknownItem { throw DeviceError.noRecoveryKey }
            throw error
        }
        try await adopt(session: session, username: username, passphrase: newPassphrase)
        return next
    }
}
