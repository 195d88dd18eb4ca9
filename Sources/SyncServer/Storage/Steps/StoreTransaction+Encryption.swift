import Foundation
import SyncCore

/// Accounts' encryption settings and key pairs, and passphrase changes, once for every backend.
extension RecordStoreBackend {
    public func encryptionSettings(owner: String) async throws -> AccountEncryptionSettings? {
        try await readStatement { try await $0.encryptionSettings(owner: owner, forUpdate: false) }
    }

    public func publicKey(owner: String) async throws -> Data? {
        try await encryptionSettings(owner: owner)?.keyPair?.publicKey
    }

    public func createEncryptionSettings(owner: String, _ settings: AccountEncryptionSettings, now: Date)
        async throws -> AccountEncryptionSettings?
    {
        // One transaction: of two devices setting up at once, one stores and the other is told (the
        // insert does nothing when a row exists, and the row is then read in the same transaction).
        try await write { transaction in
            if try await transaction.insertEncryptionSettings(settings, owner: owner, at: now.millisecondsSince1970) {
                return nil
            }
            return try await transaction.encryptionSettings(owner: owner, forUpdate: false)
        }
    }

    /// Stores a new recovery key for the account whose account key version is `expectedKeyVersion`; answers
    /// the settings then stored, or throws `serverRecordChanged` with them (the passphrase changed meanwhile)
    /// or `unknownItem` (no settings).
    public func setRecovery(owner: String, expectedKeyVersion: Int, _ recovery: StoredRecovery) async throws
        -> AccountEncryptionSettings
    {
        try await write { transaction in
            _ = try await transaction.lockAccount(owner: owner)
            guard var settings = try await transaction.encryptionSettings(owner: owner, forUpdate: true) else {
                throw SyncError(
                    .unknownItem,
                    "this account has no encryption settings yet, so there is no account key to recover; set up encrypted data first"
                )
            }
            guard settings.keyVersion == expectedKeyVersion else {
                throw SyncError(
                    .serverRecordChanged,
                    "the passphrase was changed on another device: the account key version is \(settings.keyVersion), not \(expectedKeyVersion); seal the current account key (derive it from the included settings)",
                    serverEncryptionSettings: settings)
            }
            try await transaction.setRecovery(recovery, owner: owner)
            settings.recovery = recovery.recovery
            return settings
        }
    }

    /// The account's recovery key as stored, the sealed account key included.
    public func recovery(owner: String) async throws -> StoredRecovery? {
        try await readStatement { try await $0.recovery(owner: owner) }
    }

    public func createKeyPair(owner: String, _ keyPair: AccountKeyPair) async throws -> KeyPairCreation {
        // The settings are held: of two devices publishing at once, one stores and the other is told.
        try await write { transaction in
            guard let settings = try await transaction.encryptionSettings(owner: owner, forUpdate: true) else {
                return .noSettings
            }
            if settings.keyPair != nil { return .exists(settings) }
            try await transaction.setKeyPair(keyPair, owner: owner)
            return .created
        }
    }

    /// One transaction reads what the change must cover and writes the new settings and every key
    /// wrapped again. It holds the account's lock and the locks of the owners whose shares hold the
    /// account's slots (their share saves rewrite those rows), taken in name order so that two
    /// changes never wait on each other in a circle.
    public func changeEncryption(owner: String, _ change: EncryptionChangeRequest, now: Date) async throws
        -> (settings: AccountEncryptionSettings, applied: Bool)
    {
        try await write { transaction in
            let slots = try await transaction.sharedSlots(user: owner)
            for name in Set([owner] + slots.map(\.zoneID.ownerName)).sorted() {
                _ = try await transaction.lockAccount(owner: name)
            }
            let stored = PassphraseChange.Stored(
                settings: try await transaction.encryptionSettings(owner: owner, forUpdate: true),
                zoneKeys: try await transaction.zoneKeys(owner: owner),
                sharedSlots: Dictionary(slots.map { ($0.zoneID, $0.keyVersion) }, uniquingKeysWith: max),
                recovery: try await transaction.recovery(owner: owner))
            var next: AccountEncryptionSettings
            switch try PassphraseChange.decide(change, stored: stored) {
            case .retry(let settings): return (settings, false)
            case .apply(let settings, let recovery):
                next = settings
                try await transaction.replaceEncryptionSettings(next, owner: owner)
                if let recovery {
                    try await transaction.setRecovery(recovery, owner: owner)
                    next.recovery = recovery.recovery
                }
            }
            // Each zone's key is a change of the zone, as a key a zone gains is: devices see it.
            var seq = try await transaction.lockAccount(owner: owner).current
            for update in change.zoneKeys {
                seq += 1
                try await transaction.setZoneWrappedKey(
                    update.encryptionKey.wrappedKey, owner: owner, zoneName: update.zoneID.zoneName, seq: seq,
                    at: now.millisecondsSince1970)
            }
            try await transaction.setChangeSeq(owner: owner, seq: seq)
            for update in change.sharedZoneKeys {
                try await transaction.setSharedSlotKey(update.encryptionKey, user: owner, zoneID: update.zoneID)
            }
            return (next, true)
        }
    }
}

/// The parts of a passphrase change that a store over several clusters runs on the clusters other than
/// the account's own (``ClusteredRecordStore``): the account's slots of shares whose owners live there.
extension RecordStoreBackend {
    /// The account's own slots of accepted shares of owners in this store: zone, newest key version.
    func sharedSlotVersions(user: String) async throws -> [RecordZone.ID: Int] {
        try await read { transaction in
            Dictionary(
                try await transaction.sharedSlots(user: user).map { ($0.zoneID, $0.keyVersion) },
                uniquingKeysWith: max)
        }
    }

    /// Writes the account's slots of shares in this store wrapped again, under their owners' locks (in
    /// name order, as ``changeEncryption(owner:_:now:)`` takes them).
    func replaceSharedSlotKeys(_ updates: [ZoneKeyUpdate], user: String) async throws {
        try await write { transaction in
            for name in Set(updates.map(\.zoneID.ownerName)).sorted() {
                _ = try await transaction.lockAccount(owner: name)
            }
            for update in updates {
                try await transaction.setSharedSlotKey(update.encryptionKey, user: user, zoneID: update.zoneID)
            }
        }
    }
}
