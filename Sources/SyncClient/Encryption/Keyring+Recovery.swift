import Foundation
import SyncCore
import SyncCrypto

/// The account's recovery key (``RecoveryKey``): set up by a device that holds the account key, kept sealed
/// to the newest account key by every passphrase change, and used on a device whose person lost the
/// passphrase to set a new one without losing a record, a book or a share.
extension Keyring {
    /// Makes a new recovery key for the account, replacing the one it had, and returns it: show it once;
    /// nothing keeps it.
    func setUpRecovery(client: DatabaseClient) async throws -> RecoveryKey {
        let accountKey = try await accountKey(client: client)
        let identity = try await identityKey(client: client)
        let recoveryKey = RecoveryKey.generate()
        let setup = try Self.setup(
            recoveryKey, sealing: accountKey, userRecordName: try await userRecordName(client: client),
            accountPublicKey: identity.publicKey)
        do {
            _ = try await client.setUpRecovery(
                RecoveryKeyRequest(expectedKeyVersion: accountKey.keyVersion, setup: setup))
        } catch let error as SyncError where error.code == .serverRecordChanged {
            forget()
            throw Self.changedElsewhere
        }
        return recoveryKey
    }

    /// Opens the account key with `recoveryKey` and makes this keyring's passphrase the account's, as a
    /// passphrase change does (every key wrapped again, nothing sealed again), with a new recovery key, which
    /// it returns: the one used is spent.
    ///
    /// - Throws: `permissionFailure` for a recovery key that is not the account's (the server counts it, and
    ///   after a few answers `requestRateLimited`); `unknownItem` when the account has no recovery key.
    func recover(with recoveryKey: RecoveryKey, client: DatabaseClient, shared: DatabaseClient) async throws -> (
        settings: AccountEncryptionSettings, recoveryKey: RecoveryKey
    ) {
        let newRecovery = RecoveryKey.generate()
        // Opened again at each attempt: a device may have made a zone or accepted a share meanwhile.
        let settings = try await Self.retryingConflicts {
            let opened = try await client.openRecovery(RecoveryOpenRequest(verifier: recoveryKey.verifier))
            guard let wire = try await client.encryptionSettings() else {
                throw SyncError(.unknownItem, "this account has no encrypted data, so there is nothing to recover")
            }
            let userRecordName = try await userRecordName(client: client)
            // The account must be the one the recovery key was made for: its key pair, bound at setup (a server
            // can seal an account key of its own making to the recovery key's public half, never bind it).
            guard let keyPair = wire.keyPair, let recovery = wire.recovery,
                recoveryKey.checkBinding(
                    recovery.bindingTag, userRecordName: userRecordName, accountPublicKey: keyPair.publicKey)
            else {
                throw SyncError(
                    .internalError,
                    "the account the server gives is not the one this recovery key was made for (its key pair does not match): nothing was changed; the server may have replaced it"
                )
            }
            let oldKey: AccountKey
            do {
                oldKey = try recoveryKey.open(
                    opened.sealedAccountKey, userRecordName: userRecordName, settings: try Self.settings(wire))
            } catch let error as EncryptionError {
                throw SyncError(.internalError, "the account cannot be recovered with this key: \(error.message)")
            }
            // The account key must open the account's own private key, which the server cannot make.
            _ = try Self.opened(keyPair, with: oldKey)
            return try await changeOnce(
                to: passphrase, recovered: oldKey, newRecovery: newRecovery, client: client, shared: shared)
        }
        return (settings, newRecovery)
    }

    /// What a passphrase change sends of the recovery key: a new one (`newRecovery`), or the account's
    /// (`current`) with the new account key sealed to it, after checking that the account's devices bound it
    /// to the account (a server that swapped in a public key of its own would get the new account key).
    func recoverySetup(
        replacing current: AccountRecovery?, with newRecovery: RecoveryKey?, oldKey: AccountKey, newKey: AccountKey,
        accountPublicKey: Data?, client: DatabaseClient
    ) async throws -> RecoverySetup? {
        let userRecordName = try await userRecordName(client: client)
        if let newRecovery {
            // The account's own key pair (the old account key opened it in the change).
            guard let accountPublicKey else {
                throw SyncError(.internalError, "this account has no key pair to bind a new recovery key to")
            }
            return try Self.setup(
                newRecovery, sealing: newKey, userRecordName: userRecordName, accountPublicKey: accountPublicKey)
        }
        guard let current else { return nil }
        guard RecoveryKey.checkTag(current.keyTag, recoveryPublicKey: current.publicKey, by: oldKey) else {
            throw SyncError(
                .internalError,
                "the account's recovery key, as the server gives it, is not one this account's devices set up: the server altered it, so the new passphrase's key is not sealed to it and the passphrase was not changed; set up a new recovery key (contacts account recovery-key), then change the passphrase"
            )
        }
        return RecoverySetup(
            recovery: AccountRecovery(
                publicKey: current.publicKey,
                keyTag: RecoveryKey.tag(recoveryPublicKey: current.publicKey, by: newKey),
                bindingTag: current.bindingTag),
            sealedAccountKey: try Self.sealed(newKey, to: current.publicKey, userRecordName: userRecordName),
            verifierHash: nil)
    }

    /// A new recovery key as the server keeps it, sealing `accountKey`.
    private static func setup(
        _ recoveryKey: RecoveryKey, sealing accountKey: AccountKey, userRecordName: String, accountPublicKey: Data
    ) throws -> RecoverySetup {
        RecoverySetup(
            recovery: AccountRecovery(
                publicKey: recoveryKey.publicKey,
                keyTag: RecoveryKey.tag(recoveryPublicKey: recoveryKey.publicKey, by: accountKey),
                bindingTag: recoveryKey.bindingTag(userRecordName: userRecordName, accountPublicKey: accountPublicKey)),
            sealedAccountKey: try sealed(accountKey, to: recoveryKey.publicKey, userRecordName: userRecordName),
            verifierHash: RecoveryKey.verifierHash(recoveryKey.verifier))
    }

    private static func sealed(_ accountKey: AccountKey, to publicKey: Data, userRecordName: String) throws -> Data {
        do {
            return try RecoveryKey.seal(accountKey, to: publicKey, userRecordName: userRecordName)
        } catch let error as EncryptionError {
            throw SyncError(.internalError, error.message)
        }
    }
}
