import Foundation
import SyncCore
import SyncCrypto
import Synchronization

/// The keys that open an account's encrypted values on this device: the account key, derived
/// from a passphrase the server never sees, and each zone's key, which the server keeps only
/// wrapped by the account key.
///
/// One keyring per container, shared by its databases and engines. Keys are fetched or created
/// on first use and kept in memory; ``forget()`` drops them (after an encrypted-data reset).
public final class Keyring: Sendable, Hashable {
    private struct Keys {
        var account: AccountKey?
        var zones: [RecordZone.ID: ZoneKey] = [:]
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

    private let passphrase: String
    private let parameters: ScryptParameters
    private let derivedKeys: DerivedKeys?
    private let keys = Mutex(Keys())

    /// A keyring opening encrypted values with `passphrase`. `parameters` set the cost of deriving
    /// the account key when this device is the account's first to encrypt (tests pass cheap ones).
    /// `derivedKeys`, when given, keeps the derived account key for the next process.
    public init(passphrase: String, parameters: ScryptParameters = .default, derivedKeys: DerivedKeys? = nil) {
        self.passphrase = passphrase
        self.parameters = parameters
        self.derivedKeys = derivedKeys
    }

    public static func == (lhs: Keyring, rhs: Keyring) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// Drops every key held, so that the next use fetches the account's settings and zone keys
    /// again: after an encrypted-data reset, they are new.
    public func forget() {
        keys.withLock { $0 = Keys() }
    }

    /// Drops the key held for a zone: the zone was deleted, created again or not found, so the
    /// key it has on the server now (if any) is the one to use.
    public func forget(zoneIDs: some Sequence<RecordZone.ID>) {
        keys.withLock { keys in
            for zoneID in zoneIDs { keys.zones[zoneID] = nil }
        }
    }

    /// Fetches the account's encryption settings through `database` (creating them when the account
    /// has none) and derives the account key, so that a wrong passphrase is told now, at sign-in, rather
    /// than at the first encrypted value. Throws `notAuthenticated` when the passphrase does not open the
    /// account.
    public func unlock(for database: Database) async throws {
        _ = try await accountKey(client: DatabaseClient(database: database))
    }

    // MARK: Sealing and opening

    /// `record` with its encrypted values sealed into `encrypted` fields, as it goes on the wire, with the
    /// version above its own (``RecordSeal/nextVersion(after:)``) inside each seal. For a `declared` type
    /// (``SealedRecordTypes``) every sealed field is marked changed.
    func seal(_ record: RecordValue, declared: Bool = false, client: DatabaseClient) async throws -> RecordValue {
        guard !record.encryptedValues.isEmpty else { return record }
        let cipher = FieldCipher(zoneKey: try await zoneKey(for: record.recordID.zoneID, client: client))
        return RecordSeal.seal(record, with: cipher, declared: declared)
    }

    /// `record` with its `encrypted` fields opened into its encrypted values and its sealed version read.
    /// Throws `recordTampered` for a value that does not open (``RecordSeal/open(_:declared:cipher:)``).
    func open(_ record: RecordValue, declared: Bool = false, client: DatabaseClient) async throws -> RecordValue {
        guard RecordSeal.hasSealedFields(record) else { return record }
        let zoneKey = try await zoneKey(for: record.recordID.zoneID, client: client)
        // One key per zone for now: a value of another version says so (keyVersionMismatch).
        return try await RecordSeal.open(record, declared: declared) { _ in FieldCipher(zoneKey: zoneKey) }
    }

    /// The owner name sealed values are bound to. The owner names their zone with the default owner
    /// name and a participant with the owner's user record name, so both seal with the one they share;
    /// the zone's own key, which no other zone has, binds a value to its zone.
    static let sealingOwnerName = RecordZone.ID.defaultOwnerName

    // MARK: Keys

    /// The zone's key: held, or unwrapped from the zone, or made now and stored with the zone
    /// (the server keeps the first key a zone gets, so racing devices agree on it).
    func zoneKey(for zoneID: RecordZone.ID, client: DatabaseClient) async throws -> ZoneKey {
        if let key = keys.withLock({ $0.zones[zoneID] }) { return key }
        let accountKey = try await accountKey(client: client)
        guard var zone = try await client.listZones().zones.first(where: { $0.zoneID == zoneID }) else {
            throw SyncError(.zoneNotFound, "zone \(zoneID.zoneName) does not exist; save the zone first")
        }
        if zone.encryptionKey == nil, client.database.scope == .shared {
            throw SyncError(
                .notAuthenticated,
                "this device holds no key for shared zone \(zoneID): accept the share's invitation on this device (the key travels with the invitation)"
            )
        }
        if zone.encryptionKey == nil {
            let key = try ZoneKey.generate()
            zone.encryptionKey = RecordZone.EncryptionKey(
                keyVersion: key.version,
                wrappedKey: key.wrapped(by: accountKey, zoneName: zoneID.zoneName, ownerName: zoneID.ownerName))
            let response = try await client.modifyZones(ModifyZonesRequest(saves: [zone], deletes: []))
            if let failure = response.failedZoneSaves.first { throw failure.error }
            guard let stored = response.savedZones.first(where: { $0.zoneID == zoneID }) else {
                throw SyncError(.internalError, "the server's answer left out zone \(zoneID)")
            }
            zone = stored
        }
        guard let wrapped = zone.encryptionKey else {
            throw SyncError(.internalError, "the server kept no key for zone \(zoneID)")
        }
        let key: ZoneKey
        do {
            key = try ZoneKey(
                unwrapping: wrapped.wrappedKey, with: accountKey, zoneName: zoneID.zoneName, ownerName: zoneID.ownerName
            )
        } catch let error as EncryptionError {
            throw SyncError(.internalError, "the key of zone \(zoneID) does not open: \(error.message)")
        }
        keys.withLock { $0.zones[zoneID] = key }
        return key
    }

    /// The account key: held, or derived from the passphrase and the account's settings, which
    /// this device creates when the account has none yet.
    func accountKey(client: DatabaseClient) async throws -> AccountKey {
        if let key = keys.withLock({ $0.account }) { return key }
        let key: AccountKey
        do {
            if let wire = try await client.encryptionSettings() {
                key = try derived(with: try Self.settings(wire))
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
            throw SyncError(.notAuthenticated, error.message)
        } catch let error as EncryptionError {
            throw SyncError(.internalError, "this account's encryption settings do not work: \(error.message)")
        }
        keys.withLock { $0.account = key }
        return key
    }

    /// The account key for `settings`: the one kept from an earlier derivation when it still verifies,
    /// or derived now (and kept).
    private func derived(with settings: EncryptionSettings) throws -> AccountKey {
        if let bytes = derivedKeys?.load(AccountKey.derivationID(passphrase: passphrase, settings: settings)),
            let kept = try? AccountKey(rawBytes: bytes, settings: settings)
        {
            return kept
        }
        let key = try AccountKey(passphrase: passphrase, settings: settings)
        keep(key, settings: settings)
        return key
    }

    /// Hands a key derived (or made) with `settings` to ``DerivedKeys``, filed under its derivation.
    private func keep(_ key: AccountKey, settings: EncryptionSettings) {
        derivedKeys?.save(AccountKey.derivationID(passphrase: passphrase, settings: settings), key.rawBytes)
    }

    private static func settings(_ wire: AccountEncryptionSettings) throws -> EncryptionSettings {
        try EncryptionSettings(
            salt: wire.salt,
            parameters: try ScryptParameters(
                costN: wire.costN, blockSizeR: wire.blockSizeR, parallelismP: wire.parallelismP),
            keyVersion: wire.keyVersion, verifier: wire.verifier)
    }

    private static func wire(_ settings: EncryptionSettings) -> AccountEncryptionSettings {
        AccountEncryptionSettings(
            salt: settings.salt, costN: settings.parameters.costN, blockSizeR: settings.parameters.blockSizeR,
            parallelismP: settings.parameters.parallelismP, keyVersion: settings.keyVersion,
            verifier: settings.verifier)
    }
}
