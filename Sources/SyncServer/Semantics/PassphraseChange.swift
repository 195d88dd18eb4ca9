import Foundation
import SyncCore

/// What `POST /v1/account/encryption/change` checks, the same for every store: the request
/// alone first (``validate(_:owner:)``), then against what is stored, read in the transaction
/// that applies it (``decide(_:stored:)``).
///
/// The change must re-wrap everything the old account key wrapped, or a device would later find
/// a key it cannot open: every own zone with a key, every own slot of an accepted share, and the
/// private key. Whatever a device made meanwhile (a zone, an acceptance, a key pair, a rotation)
/// makes the change refused with the thing named, so that the device fetches and sends it again.
enum PassphraseChange {
    /// What a store read under the account's lock.
    struct Stored {
        var settings: AccountEncryptionSettings?
        /// The account's live zones with a key, by name.
        var zoneKeys: [String: RecordZone.EncryptionKey]
        /// The shared zones where the account accepted a share and has an own slot, with the
        /// slot's newest key version.
        var sharedSlots: [RecordZone.ID: Int]
        /// The account's recovery key, if it has one.
        var recovery: StoredRecovery? = nil
    }

    /// What to do.
    enum Decision: Equatable {
        /// The change was applied already (a retry): answer the stored settings, write nothing.
        case retry(AccountEncryptionSettings)
        /// Write these settings (with the key pair to store), the keys of the request and, when the account
        /// has or gets one, the recovery key with the new account key sealed to it.
        case apply(AccountEncryptionSettings, recovery: StoredRecovery?)
    }

    /// Checks the request before anything is read; throws `invalidArguments` or
    /// `permissionFailure` naming the member.
    static func validate(_ change: EncryptionChangeRequest, owner: String) throws {
        guard change.settings.keyVersion == change.expectedKeyVersion + 1 else {
            throw SyncError(
                .invalidArguments,
                "settings.keyVersion is \(change.settings.keyVersion); a change makes the next version, expectedKeyVersion + 1 (\(change.expectedKeyVersion + 1))"
            )
        }
        guard change.settings.keyPair == nil else {
            throw SyncError(
                .invalidArguments, "settings.keyPair: send the key pair as the request's keyPair, not in the settings")
        }
        guard change.settings.recovery == nil else {
            throw SyncError(
                .invalidArguments,
                "settings.recovery: send the recovery key as the request's recovery, not in the settings")
        }
        var own = Set<String>()
        for (index, update) in change.zoneKeys.enumerated() {
            try RequestValidation.validate(update.zoneID, owner: owner, context: "zoneKeys[\(index)].zoneID")
            guard own.insert(update.zoneID.zoneName).inserted else {
                throw SyncError(
                    .invalidArguments,
                    "zoneKeys[\(index)]: zone '\(update.zoneID.zoneName)' appears twice; send each zone once")
            }
        }
        var shared = Set<RecordZone.ID>()
        for (index, update) in change.sharedZoneKeys.enumerated() {
            let context = "sharedZoneKeys[\(index)].zoneID"
            try RequestValidation.validate(update.zoneID, owner: nil, context: context)
            guard update.zoneID.ownerName != RecordZone.ID.defaultOwnerName, update.zoneID.ownerName != owner else {
                throw SyncError(
                    .invalidArguments,
                    "\(context): name a shared zone with its owner's user record name, as the shared database lists it; your own zones go in zoneKeys"
                )
            }
            guard shared.insert(update.zoneID).inserted else {
                throw SyncError(
                    .invalidArguments,
                    "sharedZoneKeys[\(index)]: zone \(update.zoneID) appears twice; send each zone once"
                )
            }
        }
    }

    /// Checks the request against what is stored.
    static func decide(_ change: EncryptionChangeRequest, stored: Stored) throws -> Decision {
        guard let settings = stored.settings else {
            throw SyncError(
                .unknownItem,
                "this account has no encryption settings, so there is no passphrase to change; set up encrypted data first"
            )
        }
        if settings.withoutKeyPair == change.settings, change.keyPair == nil || change.keyPair == settings.keyPair {
            return .retry(settings)
        }
        guard settings.keyVersion == change.expectedKeyVersion else {
            throw SyncError(
                .serverRecordChanged,
                "the passphrase was changed on another device: the account's key version is \(settings.keyVersion), not \(change.expectedKeyVersion); derive the account key from the included settings with the new passphrase, then change it again if you still want to",
                serverEncryptionSettings: settings)
        }
        let sent = Dictionary(change.zoneKeys.map { ($0.zoneID.zoneName, $0.encryptionKey) }) { first, _ in first }
        for name in stored.zoneKeys.keys.sorted() where sent[name] == nil {
            throw conflict("zone '\(name)' has a key that this change does not wrap again (a device made it meanwhile)")
        }
        for update in change.zoneKeys {
            let name = update.zoneID.zoneName
            guard let key = stored.zoneKeys[name] else {
                throw conflict("zone '\(name)' has no key on the server (or no longer exists)")
            }
            guard key.keyVersion == update.encryptionKey.keyVersion else {
                throw conflict(
                    "zone '\(name)' has key version \(key.keyVersion) on the server, not \(update.encryptionKey.keyVersion) (a device rotated it meanwhile)"
                )
            }
        }
        try checkSharedSlots(change.sharedZoneKeys, stored: stored.sharedSlots)
        if let storedPair = settings.keyPair {
            guard let keyPair = change.keyPair else {
                throw conflict(
                    "this account has a key pair (perhaps published meanwhile); send its private key wrapped by the new account key as keyPair"
                )
            }
            guard keyPair.publicKey == storedPair.publicKey else {
                throw conflict(
                    "keyPair.publicKey is not the account's public key; a passphrase change wraps the private key again and never replaces the pair"
                )
            }
        }
        var next = change.settings
        next.keyPair = change.keyPair
        return .apply(next, recovery: try recovery(change.recovery, stored: stored.recovery))
    }

    /// The recovery key to store with the change: a recovery key the account has must get the new account key
    /// sealed to it (the same public key), unless the change replaces it (a verifier hash sent).
    static func recovery(_ sent: RecoverySetup?, stored: StoredRecovery?) throws -> StoredRecovery? {
        guard let sent else {
            if stored != nil {
                throw conflict(
                    "this account has a recovery key (perhaps set up meanwhile); seal the new account key to it as recovery"
                )
            }
            return nil
        }
        if let hash = sent.verifierHash {
            return StoredRecovery(recovery: sent.recovery, sealedAccountKey: sent.sealedAccountKey, verifierHash: hash)
        }
        guard let stored else {
            throw SyncError(
                .invalidArguments,
                "recovery: this account has no recovery key to seal the new account key to; send verifierHash to set one up"
            )
        }
        guard sent.recovery.publicKey == stored.recovery.publicKey else {
            throw conflict(
                "recovery.recovery.publicKey is not the account's recovery key (it was replaced meanwhile); seal the new account key to the one the settings give"
            )
        }
        // The same recovery key: its binding to the account stays as it was made (only it can make one).
        var recovery = sent.recovery
        recovery.bindingTag = stored.recovery.bindingTag
        return StoredRecovery(
            recovery: recovery, sealedAccountKey: sent.sealedAccountKey, verifierHash: stored.verifierHash)
    }

    /// Checks that `sent` wraps again exactly the account's own slots of shares in `stored` (zone: the
    /// slot's newest key version), each at its version.
    static func checkSharedSlots(_ sent: [ZoneKeyUpdate], stored sharedSlots: [RecordZone.ID: Int]) throws {
        let sentShared = Dictionary(sent.map { ($0.zoneID, $0.encryptionKey) }) { first, _ in first }
        for zoneID in sharedSlots.keys.sorted() where sentShared[zoneID] == nil {
            throw conflict(
                "the shared zone \(zoneID) holds a key of yours that this change does not wrap again (accepted meanwhile)"
            )
        }
        for update in sent {
            guard let version = sharedSlots[update.zoneID] else {
                throw conflict(
                    "the shared zone \(update.zoneID) holds no key of yours (or is no longer shared with you)")
            }
            guard version == update.encryptionKey.keyVersion else {
                throw conflict(
                    "your key of the shared zone \(update.zoneID) has version \(version) on the server, not \(update.encryptionKey.keyVersion)"
                )
            }
        }
    }

    private static func conflict(_ what: String) -> SyncError {
        SyncError(
            .constraintViolation,
            "\(what); nothing was changed: fetch the zones and the encryption settings again, and send the change again"
        )
    }
}
