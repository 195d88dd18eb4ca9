import Foundation
import SyncCore
import SyncCrypto
import SyncKit
import SyncTesting
import Synchronization

/// A device running Apple's sample contacts logic on top of a ``SyncEngine``, written the way a
/// CloudKit app is: an in-memory store, each contact's last known server record kept as archived
/// system fields (`encodeSystemFields(with:)`), records filled in place, and the sample's conflict
/// handling (the newer user edit wins).
final class TestDevice: SyncEngineDelegate {
    struct Contact: Hashable, Sendable {
        var name: String
        var userModificationDate: Date
        /// The last known server record's system fields, archived with `NSKeyedArchiver`.
        var lastKnownRecordData: Data?

        /// The last known server record, rebuilt from its archived system fields (no field values).
        var lastKnownRecord: Record? {
            get {
                guard let data = lastKnownRecordData,
                    let unarchiver = try? NSKeyedUnarchiver(forReadingFrom: data)
                else { return nil }
                unarchiver.requiresSecureCoding = true
                return Record(coder: unarchiver)
            }
            set {
                guard let newValue else {
                    lastKnownRecordData = nil
                    return
                }
                let archiver = NSKeyedArchiver(requiringSecureCoding: true)
                newValue.encodeSystemFields(with: archiver)
                lastKnownRecordData = archiver.encodedData
            }
        }
    }

    static let zoneID = RecordZone.ID(zoneName: "Contacts")

    let name: String
    /// The zone this device keeps its contacts in: ``zoneID`` in its private database, or a zone
    /// another user shares with it (named with its owner's user record name).
    let zone: RecordZone.ID
    let contacts = Mutex<[String: Contact]>([:])
    let savedState = Mutex<SyncEngine.State.Serialization?>(nil)
    let eventLog = Mutex<[String]>([])
    /// The record names of every modification fetched, in order (a record fetched twice appears twice).
    let fetchedRecordNames = Mutex<[String]>([])
    /// Every record the engine reported saved (`sentRecordZoneChanges`), in order.
    let savedRecords = Mutex<[Record]>([])
    /// The reasons of the zone deletions fetched, in order.
    let zoneDeletionReasons = Mutex<[ZoneDeletionReason]>([])
    /// Delegate calls running now, and the most that ever ran at once (CKSyncEngine calls its delegate
    /// one call at a time).
    let delegateCalls = Mutex((running: 0, most: 0))
    /// Whether a sign-in queues the zone and every contact again, as the sample does.
    let queuesEverythingOnSignIn: Bool
    private let engineBox = Mutex<SyncEngine?>(nil)

    var engine: SyncEngine { engineBox.withLock { $0! } }

    init(
        name: String, server: TestServer, client: TestClient, automaticallySync: Bool = false,
        state: SyncEngine.State.Serialization? = nil, credentials: Database.Credentials? = nil,
        policy: SyncScheduler.Policy = .standard, queuesEverythingOnSignIn: Bool = true,
        keyring: Keyring = TestDevice.keyring(), scope: DatabaseScope = .private,
        zone: RecordZone.ID = TestDevice.zoneID
    ) {
        precondition(
            !automaticallySync || server.transport == .loopback,
            "automatic sync listens for push, which needs a listener: start the server with transport: .loopback")
        self.name = name
        self.zone = zone
        self.queuesEverythingOnSignIn = queuesEverythingOnSignIn
        savedState.withLock { $0 = state }
        var configuration = SyncEngine.Configuration(
            database: Database(
                serverURL: URL(string: server.baseURL)!, credentials: credentials ?? .token(client.token!),
                scope: scope, deviceID: name, keyring: keyring),
            stateSerialization: state, delegate: self)
        configuration.automaticallySync = automaticallySync
        // A busy machine must not hold a test's syncs back for a minute.
        configuration.schedulerProbes = []
        configuration.schedulerPolicy = policy
        engineBox.withLock { $0 = SyncEngine(configuration) }
    }

    /// The account's passphrase in these tests.
    static let passphrase = "correct horse battery staple"

    /// A keyring as a device holds one: its own, opening the account's keys with `passphrase`.
    /// Cheap scrypt parameters: a debug build derives the default ones in about a second.
    static func keyring(passphrase: String = TestDevice.passphrase) -> Keyring {
        Keyring(passphrase: passphrase, parameters: cheapScrypt)
    }

    static let cheapScrypt = try! ScryptParameters(costN: 1 << 10, blockSizeR: 8, parallelismP: 1)

    /// A policy that never polls in a test's lifetime: what such a device hears, it hears by push.
    static let pushOnly = SyncScheduler.Policy(pollInterval: .seconds(86_400))

    /// Names of the contacts, sorted.
    var names: [String] { contacts.withLock { $0.values.map(\.name).sorted() } }

    // MARK: Local edits

    func save(id: String, name: String, date: Date = Date()) {
        contacts.withLock { contacts in
            var contact = contacts[id] ?? Contact(name: name, userModificationDate: date, lastKnownRecordData: nil)
            contact.name = name
            contact.userModificationDate = date
            contacts[id] = contact
        }
        engine.state.add(pendingRecordZoneChanges: [.saveRecord(Record.ID(recordName: id, zoneID: zone))])
    }

    func delete(id: String) {
        contacts.withLock { _ = $0.removeValue(forKey: id) }
        engine.state.add(pendingRecordZoneChanges: [.deleteRecord(Record.ID(recordName: id, zoneID: zone))])
    }

    static func recordID(_ id: String) -> Record.ID {
        Record.ID(recordName: id, zoneID: zoneID)
    }

    // MARK: Delegate

    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
        enterDelegateCall()
        defer { delegateCalls.withLock { $0.running -= 1 } }
        eventLog.withLock { $0.append(Self.kind(event)) }
        switch event {
        case .stateUpdate(let update):
            savedState.withLock { $0 = update.stateSerialization }
        case .accountChange(let change):
            if case .signIn = change.changeType {
                guard queuesEverythingOnSignIn, syncEngine.database.scope == .private else { break }
                syncEngine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: zone))])
                let ids = contacts.withLock { Array($0.keys) }
                syncEngine.state.add(
                    pendingRecordZoneChanges: ids.map { .saveRecord(Record.ID(recordName: $0, zoneID: zone)) })
            } else {
                contacts.withLock { $0 = [:] }
            }
        case .fetchedDatabaseChanges(let changes):
            zoneDeletionReasons.withLock { $0 += changes.deletions.map(\.reason) }
            if changes.deletions.contains(where: { $0.zoneID == zone }) {
                contacts.withLock { $0 = [:] }
            }
        case .fetchedRecordZoneChanges(let changes):
            // A shared zone holds its share too, as a record of type `cloudkit.share`: not a contact.
            for modification in changes.modifications where modification.record.recordType == "Contact" {
                merge(serverRecord: modification.record)
            }
            fetchedRecordNames.withLock { $0 += changes.modifications.map(\.record.recordID.recordName) }
            contacts.withLock { contacts in
                for deletion in changes.deletions { contacts[deletion.recordID.recordName] = nil }
            }
        case .sentRecordZoneChanges(let sent):
            savedRecords.withLock { $0 += sent.savedRecords }
            for record in sent.savedRecords {
                contacts.withLock { $0[record.recordID.recordName]?.lastKnownRecord = record }
            }
            for failure in sent.failedRecordSaves {
                let id = failure.record.recordID
                switch failure.error.code {
                case .serverRecordChanged:
                    if let serverRecord = failure.error.serverRecord { merge(serverRecord: serverRecord) }
                    syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
                case .zoneNotFound:
                    syncEngine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: id.zoneID))])
                    syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
                    contacts.withLock { $0[id.recordName]?.lastKnownRecord = nil }
                case .unknownItem:
                    syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
                    contacts.withLock { $0[id.recordName]?.lastKnownRecord = nil }
                default:
                    break
                }
            }
        default:
            break
        }
    }

    func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.RecordZoneChangeBatch?
    {
        enterDelegateCall()
        defer { delegateCalls.withLock { $0.running -= 1 } }
        let pending = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
        return await SyncEngine.RecordZoneChangeBatch(pendingChanges: pending) { recordID in
            self.record(for: recordID)
        }
    }

    private func enterDelegateCall() {
        delegateCalls.withLock { calls in
            calls.running += 1
            calls.most = max(calls.most, calls.running)
        }
    }

    /// The record to save: the last known server record (for its change tag) with local values.
    private func record(for recordID: Record.ID) -> Record? {
        guard let contact = contacts.withLock({ $0[recordID.recordName] }) else {
            engine.state.remove(pendingRecordZoneChanges: [.saveRecord(recordID)])
            return nil
        }
        let record = contact.lastKnownRecord ?? Record(recordType: "Contact", recordID: recordID)
        populate(record, from: contact)
        return record
    }

    /// Fills a record in place, as the sample's model does.
    private func populate(_ record: Record, from contact: Contact) {
        record.encryptedValues[.name] = contact.name
        record.encryptedValues[.userModificationDate] = contact.userModificationDate
    }

    /// Takes the server's values when its user edit is newer; keeps the newer server record.
    private func merge(serverRecord: Record) {
        let id = serverRecord.recordID.recordName
        let serverName = serverRecord.encryptedValues[.name] as? String ?? ""
        let serverDate = serverRecord.encryptedValues[.userModificationDate] as? Date ?? .distantPast
        contacts.withLock { contacts in
            guard var contact = contacts[id] else {
                var contact = Contact(name: serverName, userModificationDate: serverDate, lastKnownRecordData: nil)
                contact.lastKnownRecord = serverRecord
                contacts[id] = contact
                return
            }
            if serverDate > contact.userModificationDate {
                contact.name = serverName
                contact.userModificationDate = serverDate
            }
            if (serverRecord.modificationDate ?? .distantPast)
                >= (contact.lastKnownRecord?.modificationDate ?? .distantPast)
            {
                contact.lastKnownRecord = serverRecord
            }
            contacts[id] = contact
        }
    }

    static func kind(_ event: SyncEngine.Event) -> String {
        String(describing: event).split(separator: "(").first.map(String.init) ?? ""
    }
}

extension Record.FieldKey {
    fileprivate static let name = "name"
    fileprivate static let userModificationDate = "userModificationDate"
}
