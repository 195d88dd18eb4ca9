import Foundation
import SyncCore
import SyncCrypto
import Synchronization

/// A passphrase change: the account key changes, the keys it wraps do not. Every zone key chain, every
/// own slot of an accepted share and the account's private key are opened with the old account key and
/// wrapped again with the new one, and the server stores all of it with the new settings in one request.
/// No record is sealed again.
extension Keyring {
    /// Changes the account's passphrase to `newPassphrase`, through the clients of the private and the
    /// shared database. Answers the settings now stored. Afterwards this keyring holds the new account
    /// key; keyrings made later need `newPassphrase`.
    ///
    /// - Throws: `notAuthenticated` when this keyring's passphrase no longer opens the account (it was
    ///   changed on another device); `serverRecordChanged` when another device changed it meanwhile;
    ///   `unknownItem` when the account has no encrypted data yet.
    func changePassphrase(to newPassphrase: String, client: DatabaseClient, shared: DatabaseClient) async throws
        -> AccountEncryptionSettings
    {
        try await Self.retryingConflicts {
            try await changeOnce(to: newPassphrase, client: client, shared: shared)
        }
    }

    /// Runs a change of the account's encryption up to three times: a device can make a zone, accept a share
    /// or publish a key pair while it runs, and the server then refuses it (`constraintViolation`, changing
    /// nothing); `attempt` reads what the server holds again each time.
    static func retryingConflicts<T>(_ attempt: () async throws -> T) async throws -> T {
        for number in 1...3 {
            do {
                return try await attempt()
            } catch let error as SyncError where error.code == .constraintViolation && number < 3 {
                continue
            }
        }
        throw SyncError(.internalError, "unreachable: the last attempt returns or throws")
    }

    /// One attempt. `recovered` is the old account key when a recovery key opened it (the passphrase is
    /// lost); `newRecovery` replaces the account's recovery key (a recovery does: the one used is spent).
    func changeOnce(
        to newPassphrase: String, recovered: AccountKey? = nil, newRecovery: RecoveryKey? = nil,
        client: DatabaseClient, shared: DatabaseClient
    ) async throws -> AccountEncryptionSettings {
        guard let wire = try await client.encryptionSettings() else {
            throw SyncError(
                .unknownItem,
                "this account has no encrypted data yet, so it has no passphrase to change; the passphrase this device has is the one the first encrypted save sets up"
            )
        }
        let oldKey: AccountKey
        if let recovered {
            oldKey = recovered
        } else {
            oldKey = try await accountKey(client: client)
        }
        guard oldKey.keyVersion == wire.keyVersion else {
            // The key held is of older settings: another device changed the passphrase since.
            forget()
            throw Self.changedElsewhere
        }
        let (settings, newKey): (EncryptionSettings, AccountKey)
        do {
            // The account keeps its cost parameters; only the passphrase, the salt and the version change.
            (settings, newKey) = try EncryptionSettings.create(
                passphrase: newPassphrase,
                parameters: try ScryptParameters(
                    costN: wire.costN, blockSizeR: wire.blockSizeR, parallelismP: wire.parallelismP),
                keyVersion: wire.keyVersion + 1)
        } catch let error as EncryptionError {
            throw SyncError(.invalidArguments, "the new passphrase cannot be used: \(error.message)")
        }

        var zoneKeys: [ZoneKeyUpdate] = []
        for zone in try await client.listZones().zones {
            guard let wrapped = zone.encryptionKey else { continue }
            let chain = try ownChain(of: zone, accountKey: oldKey)
            zoneKeys.append(
                ZoneKeyUpdate(
                    zoneID: zone.zoneID,
                    encryptionKey: RecordZone.EncryptionKey(
                        keyVersion: wrapped.keyVersion,
                        wrappedKey: chain.wrapped(
                            by: newKey, zoneName: zone.zoneID.zoneName, ownerName: zone.zoneID.ownerName))))
        }
        var sharedZoneKeys: [ZoneKeyUpdate] = []
        for zone in try await shared.listZones().zones {
            guard let slot = zone.encryptionKey else { continue }
            let zoneID = zone.zoneID
            var rewrapped = slot
            // A slot that does not open with the old key opens with nothing this device has: it goes back
            // as it is (the server wants every slot named), and the owner's wrap to this account's key
            // pair still gives the zone's keys.
            if let chain = try? ZoneKeyChain(
                unwrapping: slot.wrappedKey, with: oldKey, zoneName: zoneID.zoneName, ownerName: zoneID.ownerName)
            {
                rewrapped.wrappedKey = chain.wrapped(by: newKey, zoneName: zoneID.zoneName, ownerName: zoneID.ownerName)
            }
            sharedZoneKeys.append(ZoneKeyUpdate(zoneID: zoneID, encryptionKey: rewrapped))
        }
        var keyPair: AccountKeyPair?
        if let stored = wire.keyPair {
            let identity = try Self.opened(stored, with: oldKey)
            keyPair = AccountKeyPair(
                publicKey: stored.publicKey, wrappedPrivateKey: identity.wrappedPrivateKey(by: newKey))
        }

        let request = EncryptionChangeRequest(
            expectedKeyVersion: wire.keyVersion,
            settings: Self.wire(settings),
            zoneKeys: zoneKeys, sharedZoneKeys: sharedZoneKeys, keyPair: keyPair,
            recovery: try await recoverySetup(
                replacing: wire.recovery, with: newRecovery, oldKey: oldKey, newKey: newKey,
                accountPublicKey: wire.keyPair?.publicKey, client: client))
        let stored: AccountEncryptionSettings
        do {
            stored = try await client.changeEncryption(request)
        } catch let error as SyncError where error.code == .serverRecordChanged {
            forget()
            throw Self.changedElsewhere
        }
        // The zone keys and the key pair held stay right: only their wrapping changed.
        keys.withLock { $0.account = newKey }
        return stored
    }

    /// The error for a passphrase that another device changed: the account key this device holds, or
    /// derives from its passphrase, is no longer the account's.
    static let changedElsewhere = passphraseRejected(
        "the passphrase of this account's encrypted data was changed on another device; enter the new one on this device (its data and pending changes stay here until then)"
    )

    /// A passphrase that does not open the account's settings (reason `passphraseRejected`), so that an
    /// app that checked its passphrase before can say that it was changed on another device.
    static func passphraseRejected(_ message: String) -> SyncError {
        var error = SyncError(.notAuthenticated, message)
        error.reason = .passphraseRejected
        return error
    }
}
