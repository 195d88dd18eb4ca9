import Foundation
import SyncCore
import SyncCrypto
import Synchronization

/// The keys that open an account's encrypted values on this device: the account key, derived
/// from a passphrase the server never sees; the account's X25519 key pair, whose private half the
/// server keeps only wrapped by the account key; and each zone's chain of key versions, which the
/// server keeps wrapped by the account key (the owner's, and each participant's own slot) or by the
/// owner to a participant's public key.
///
/// One keyring per container, shared by its databases and engines. Keys are fetched or created
/// on first use and kept in memory; ``forget()`` drops them (after an encrypted-data reset).
public final class Keyring: Sendable, Hashable {
    struct Keys {
        var account: AccountKey?
        var identity: AccountIdentityKey?
        var userRecordName: String?
        var zones: [RecordZone.ID: ZoneKeyChain] = [:]
    }

    /// Where a device keeps the account keys its keyrings derived, so that a process started again
    /// does not run scrypt again (a tenth of a second or more, by design, on every command otherwise).
    /// Keys are filed under ``AccountKey/derivationID(passphrase:settings:)``; keep them where the
    /// passphrase is kept, never on the server.
    public struct DerivedKeys: Sendable {
        public var load: @Sendable (_ derivationID: String) -> Data?
        public var save: @Sendable (_ derivationID: String, _ key: Data) -> Void

        public init(
            load: @escaping @Sendable (_ derivationID: String) -> Data?,
            save: @escaping @Sendable (_ derivationID: String, _ key: Data) -> Void
        ) {
            self.load = load
            self.save = save
        }
    }

    let passphrase: String
    private let parameters: ScryptParameters
    private let derivedKeys: DerivedKeys?
    /// The other accounts' public keys this device saw and verified: every key the server hands out is
    /// checked against them before a zone's keys are wrapped to it or a share is accepted from it.
    public let knownKeys: KnownKeys?
    /// The account keys this keyring derived, by derivation: forgetting keys (a changed zone, a reset)
    /// fetches the settings again, and must not cost another scrypt run when they are the same.
    private let derivedHere = Mutex<[String: Data]>([:])
    let keys = Mutex(Keys())

    /// A keyring opening encrypted values with `passphrase`. `parameters` set the cost of deriving
    /// the account key when this device is the account's first to encrypt (tests pass cheap ones).
    /// `derivedKeys`, when given, keeps the derived account key for the next process; `knownKeys`, when
    /// given, pins other accounts' public keys (without it, every key the server gives is taken as it is).
    public init(
        passphrase: String, parameters: ScryptParameters = .default, derivedKeys: DerivedKeys? = nil,
        knownKeys: KnownKeys? = nil
    ) {
        self.passphrase = passphrase
        self.parameters = parameters
        self.derivedKeys = derivedKeys
        self.knownKeys = knownKeys
    }

    /// Whether this keyring holds the account's key pair: ``unlock(for:)`` made sure the account has one.
    public var holdsKeyPair: Bool { keys.withLock { $0.identity != nil } }

    public static func == (lhs: Keyring, rhs: Keyring) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// Drops every key held, so that the next use fetches the account's settings and zone keys
    /// again: after an encrypted-data reset, they are new.
    public func forget() {
        keys.withLock { $0 = Keys() }
    }

    /// Drops the key held for a zone: the zone was deleted, created again or not found, so the
    /// key it has on the server now (if any) is the one to use.
    ///
    /// The account key goes too: a zone's key wrapped anew may be wrapped by a newer account key (the
    /// passphrase was changed on another device), which the next use then finds out and says
    /// (``SyncError/Reason/passphraseRejected``) instead of failing to open the zone's key.
    public func forget(zoneIDs: some Sequence<RecordZone.ID>) {
        keys.withLock { keys in
            var forgotten = false
            for zoneID in zoneIDs {
                forgotten = forgotten || keys.zones[zoneID] != nil
                keys.zones[zoneID] = nil
            }
            if forgotten { keys.account = nil }
        }
    }

    /// Fetches the account's encryption settings through `database` (creating them when the account
    /// has none) and derives the account key, so that a wrong passphrase is told now, at sign-in, rather
    /// than at the first encrypted value. Throws `notAuthenticated` when the passphrase does not open the
    /// account.
    /// Also makes the account's key pair when it has none, so that others can share with it.
    public func unlock(for database: Database) async throws {
        let client = DatabaseClient(database: database)
        _ = try await accountKey(client: client)
        _ = try await identityKey(client: client)
    }

    // MARK: Sealing and opening

    /// `record` with its encrypted values sealed into `encrypted` fields, as it goes on the wire, with the
    /// version above its own (``RecordSeal/nextVersion(after:)``) inside each seal. For a `declared` type
    /// (``SealedRecordTypes``) every sealed field is marked changed.
    func seal(_ record: RecordValue, declared: Bool = false, client: DatabaseClient) async throws -> RecordValue {
        guard RecordSeal.needsSealing(record) else { return record }
        let cipher = FieldCipher(zoneKey: try await zoneKey(for: record.recordID.zoneID, client: client))
        return RecordSeal.seal(record, with: cipher, declared: declared)
    }

    /// `record` with its `encrypted` fields opened into its encrypted values and its sealed version read.
    /// Throws `recordTampered` for a value that does not open (``RecordSeal/open(_:declared:cipher:)``).
    func open(_ record: RecordValue, declared: Bool = false, client: DatabaseClient) async throws -> RecordValue {
        guard RecordSeal.hasSealedFields(record) else { return record }
        let zoneID = record.recordID.zoneID
        // Each value names the key version it was sealed with: older values keep their versions.
        return try await RecordSeal.open(record, declared: declared) { version in
            guard let key = try await self.zoneKey(for: zoneID, version: version, client: client) else {
                throw SyncError.tampered(
                    record.recordID, recordType: record.recordType, .doesNotOpen,
                    "it names key version \(version) of its zone, which the zone's keys on the server do not hold: "
                        + "it was forged, or its key was lost")
            }
            return FieldCipher(zoneKey: key)
        }
    }

    /// The owner name sealed values are bound to. The owner names their zone with the default owner
    /// name and a participant with the owner's user record name, so both seal with the one they share;
    /// the zone's own key, which no other zone has, binds a value to its zone.
    static let sealingOwnerName = RecordZone.ID.defaultOwnerName

    // MARK: Keys

    /// The zone's newest key, which seals new values.
    func zoneKey(for zoneID: RecordZone.ID, client: DatabaseClient) async throws -> ZoneKey {
        try await zoneKeyChain(for: zoneID, client: client).newest
    }

    /// The zone's key of `version`, which opens values sealed with it; nil when the zone's keys do not hold
    /// it. A version this device does not hold yet (another device rotated the zone's key) makes it fetch the
    /// zone's keys again, once.
    func zoneKey(for zoneID: RecordZone.ID, version: Int, client: DatabaseClient) async throws -> ZoneKey? {
        if let key = try await zoneKeyChain(for: zoneID, client: client).key(version: version) { return key }
        forget(zoneIDs: [zoneID])
        return try await zoneKeyChain(for: zoneID, client: client).key(version: version)
    }

    /// The zone's chain of keys: held, or unwrapped from the zone, or (for an own zone without one)
    /// made now and stored with the zone (the server keeps the first key a zone gets, so racing
    /// devices agree on it). A shared zone's keys come from the participant's own slot and the chain
    /// its owner wrapped to them (``participantChain(for:client:ownerKey:)``).
    func zoneKeyChain(for zoneID: RecordZone.ID, client: DatabaseClient) async throws -> ZoneKeyChain {
        if let chain = keys.withLock({ $0.zones[zoneID] }) { return chain }
        // An own zone's key opens with the account key: asked for beside the zones, not after them.
        async let ownerKey = client.database.scope == .shared ? nil : accountKey(client: client)
        guard var zone = try await client.listZones().zones.first(where: { $0.zoneID == zoneID }) else {
            throw SyncError(.zoneNotFound, "zone \(zoneID.zoneName) does not exist; save the zone first")
        }
        let chain: ZoneKeyChain
        if client.database.scope == .shared {
            chain = try await participantChain(for: zone, client: client)
        } else {
            guard let accountKey = try await ownerKey else {
                throw SyncError(.internalError, "unreachable: a private database's zone has the account key")
            }
            if zone.encryptionKey == nil {
                let chain = try ZoneKeyChain.generate()
                zone.encryptionKey = RecordZone.EncryptionKey(
                    keyVersion: chain.newest.version,
                    wrappedKey: chain.wrapped(by: accountKey, zoneName: zoneID.zoneName, ownerName: zoneID.ownerName))
                zone = try await saveZone(zone, client: client)
            }
            chain = try ownChain(of: zone, accountKey: accountKey)
        }
        keys.withLock { $0.zones[zoneID] = chain }
        return chain
    }

    /// Saves an own zone (with a new key or chain) and returns it as the server stored it: with the key
    /// it kept, which is another device's when that device stored one first (or a higher version).
    func saveZone(_ zone: RecordZone, client: DatabaseClient) async throws -> RecordZone {
        let response = try await client.modifyZones(ModifyZonesRequest(saves: [zone], deletes: []))
        if let failure = response.failedZoneSaves.first { throw failure.error }
        guard let stored = response.savedZones.first(where: { $0.zoneID == zone.zoneID }) else {
            throw SyncError(.internalError, "the server's answer left out zone \(zone.zoneID)")
        }
        return stored
    }

    /// The chain an own zone's key opens to (format 1, one key, or format 3).
    func ownChain(of zone: RecordZone, accountKey: AccountKey) throws -> ZoneKeyChain {
        guard let wrapped = zone.encryptionKey else {
            throw SyncError(.internalError, "the server kept no key for zone \(zone.zoneID)")
        }
        do {
            return try ZoneKeyChain(
                unwrapping: wrapped.wrappedKey, with: accountKey, zoneName: zone.zoneID.zoneName,
                ownerName: zone.zoneID.ownerName)
        } catch let error as EncryptionError {
            throw SyncError(.internalError, "the key of zone \(zone.zoneID) does not open: \(error.message)")
        }
    }

    /// Keeps `chain` as the zone's keys on this device (after a rotation or an upgrade).
    func hold(_ chain: ZoneKeyChain, for zoneID: RecordZone.ID) {
        keys.withLock { $0.zones[zoneID] = chain }
    }

    /// The account key: held, or derived from the passphrase and the account's settings, which
    /// this device creates when the account has none yet.
    func accountKey(client: DatabaseClient) async throws -> AccountKey {
        if let key = keys.withLock({ $0.account }) { return key }
        let key: AccountKey
        var identity: AccountIdentityKey?
        do {
            if let wire = try await client.encryptionSettings() {
                key = try derived(with: try Self.settings(wire))
                // The key pair came with the settings: opened now, it spares ``identityKey(client:)`` fetching
                // them again (one that does not open is left to that, which says why).
                identity = wire.keyPair.flatMap { try? Self.opened($0, with: key) }
            } else {
                let (settings, created) = try EncryptionSettings.create(passphrase: passphrase, parameters: parameters)
                do {
                    try await client.createEncryptionSettings(Self.wire(settings))
                    key = created
                    keep(created, settings: settings)
                } catch let error as SyncError {
                    // Another device set the account up first: use its settings.
                    guard let theirs = error.serverEncryptionSettings else { throw error }
                    key = try derived(with: try Self.settings(theirs))
                }
            }
        } catch let error as EncryptionError where error.code == .wrongPassphrase {
            throw Self.passphraseRejected(error.message)
        } catch let error as EncryptionError {
            throw SyncError(.internalError, "this account's encryption settings do not work: \(error.message)")
        }
        keys.withLock { keys in
            keys.account = key
            if let identity { keys.identity = identity }
        }
        return key
    }

    /// The account key for `settings`: the one kept from an earlier derivation when it still verifies,
    /// or derived now (and kept).
    private func derived(with settings: EncryptionSettings) throws -> AccountKey {
        let derivationID = AccountKey.derivationID(passphrase: passphrase, settings: settings)
        if let bytes = derivedHere.withLock({ $0[derivationID] }) ?? derivedKeys?.load(derivationID),
            let kept = try? AccountKey(rawBytes: bytes, settings: settings)
        {
            return kept
        }
        let key = try AccountKey(passphrase: passphrase, settings: settings)
        keep(key, settings: settings)
        return key
    }

    /// Keeps a key derived (or made) with `settings` here and hands it to ``DerivedKeys``, filed under its
    /// derivation.
    private func keep(_ key: AccountKey, settings: EncryptionSettings) {
        let derivationID = AccountKey.derivationID(passphrase: passphrase, settings: settings)
        derivedHere.withLock { $0[derivationID] = key.rawBytes }
        derivedKeys?.save(derivationID, key.rawBytes)
    }

    static func settings(_ wire: AccountEncryptionSettings) throws -> EncryptionSettings {
        try EncryptionSettings(
            salt: wire.salt,
            parameters: try ScryptParameters(
                costN: wire.costN, blockSizeR: wire.blockSizeR, parallelismP: wire.parallelismP),
            keyVersion: wire.keyVersion, verifier: wire.verifier)
    }

    static func wire(_ settings: EncryptionSettings) -> AccountEncryptionSettings {
        AccountEncryptionSettings(
            salt: settings.salt, costN: settings.parameters.costN, blockSizeR: settings.parameters.blockSizeR,
            parallelismP: settings.parameters.parallelismP, keyVersion: settings.keyVersion,
            verifier: settings.verifier)
    }
}
