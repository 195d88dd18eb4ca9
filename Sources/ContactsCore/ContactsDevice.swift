import Foundation
import GRDB
import SyncCore
import SyncCrypto
import SyncKit
import Synchronization

/// One device of the contacts app: its local store, its sync engine, and the delegate that
/// keeps the two in step, as Apple's CKSyncEngine sample does (and more carefully).
///
/// Used by the CLI and the TUI alike. One process at a time opens a device (a lock file says so).
public final class ContactsDevice: Sendable {
    public struct Options: Sendable {
        public var dataDirectory: String
        public var deviceName: String
        public var serverURL: URL
        public var automaticallySync: Bool
        /// How costly the account key's derivation is when this device is the account's first to
        /// encrypt (tests pass cheap parameters; every other device uses the account's).
        public var keyDerivation: ScryptParameters

        public init(
            dataDirectory: String, deviceName: String, serverURL: URL, automaticallySync: Bool,
            keyDerivation: ScryptParameters = .default
        ) {
            self.dataDirectory = dataDirectory
            self.deviceName = deviceName
            self.serverURL = serverURL
            self.automaticallySync = automaticallySync
            self.keyDerivation = keyDerivation
        }
    }

    /// Something that happened, for the TUI's event log and live list.
    public enum Activity: Sendable {
        /// An engine event, described for people ("fetched 3 changes in Contacts").
        case event(String, date: Date)
        /// A send or fetch failed ("send failed: networkFailure …"), for the log's error colour.
        case failure(String, date: Date)
        /// Contacts changed because of sync: reload what is shown.
        case contactsChanged
        /// The account changed (signed in, out, switched).
        case accountChanged
    }

    public let options: Options
    public let store: ContactStore
    public let credentials: CredentialStore
    private let engineBox = Mutex<SyncEngine?>(nil)
    private let lock: DeviceLock
    /// Outbox versions in the batch being sent, by outbox key: a confirmation settles only those.
    private let versionsInFlight = Mutex<[String: Int64]>([:])
    private let observers = Mutex<[UUID: AsyncStream<Activity>.Continuation]>([:])
    private let fetchedCount = Mutex(0)
    /// Sends and fetches that began, to log each one's outcome once (see ``SyncOutcomeLog``).
    private let outcomes = Mutex(SyncOutcomeLog())
    private let outcomeTask = Mutex<Task<Void, Never>?>(nil)

    public var engine: SyncEngine { engineBox.withLock { $0! } }
    public var name: String { options.deviceName }
    /// How many changes the fetch in progress (or the last one) has received so far, for progress displays.
    public var fetchedSoFar: Int { fetchedCount.withLock { $0 } }

    public init(_ options: Options) throws {
        self.options = options
        let directory = options.dataDirectory + "/devices"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = directory + "/\(options.deviceName).sqlite"
        lock = try DeviceLock(path: path + ".lock", deviceName: options.deviceName)
        store = try ContactStore(path: path)
        credentials = CredentialStore(token: try store.setting(.token))
        if try store.setting(.deviceID) == nil { try store.setSetting(.deviceID, UUID().uuidString) }
        try store.setSetting(.serverURL, options.serverURL.absoluteString)
        try store.write { db in try ContactStore.queuePlainRecordsForEncryption(db) }
        try makeEngine(state: try store.engineState())
    }

    deinit {
        outcomeTask.withLock { $0?.cancel() }
        engineBox.withLock { $0 = nil }
    }

    private func makeEngine(state: SyncEngine.State.Serialization?) throws {
        let database = Database(
            serverURL: options.serverURL, credentials: .store(credentials), deviceID: try store.setting(.deviceID),
            keyring: try store.setting(.passphrase).map(keyring))
        var configuration = SyncEngine.Configuration(database: database, stateSerialization: state, delegate: self)
        configuration.automaticallySync = options.automaticallySync
        let engine = SyncEngine(configuration)
        // The outbox is the truth: what a crash kept from the engine's last saved state comes back.
        let outbox = try store.outbox()
        engine.state.add(
            pendingDatabaseChanges: outbox.compactMap { if case .zone(let c) = $0.change { c } else { nil } })
        engine.state.add(
            pendingRecordZoneChanges: outbox.compactMap { if case .record(let c) = $0.change { c } else { nil } })
        engineBox.withLock { $0 = engine }
        followOutcomes(of: engine)
    }

    /// Logs the outcome of each send and fetch from the scheduler's statuses, which know it (an engine event
    /// does not). Without a scheduler, `didSendChanges` and `didFetchChanges` are logged as "done" instead.
    private func followOutcomes(of engine: SyncEngine) {
        outcomes.withLock { $0 = SyncOutcomeLog() }
        let task = engine.scheduler.map { scheduler in
            let updates = scheduler.statusUpdates
            return Task { [weak self] in
                for await status in updates {
                    guard let self else { return }
                    for line in self.outcomes.withLock({ $0.lines(for: status) }) {
                        self.announce(
                            line.isError ? .failure(line.text, date: Date()) : .event(line.text, date: Date()))
                    }
                }
            }
        }
        outcomeTask.withLock { current in
            current?.cancel()
            current = task
        }
    }

    private func keyring(_ passphrase: String) -> Keyring {
        Keyring(passphrase: passphrase, parameters: options.keyDerivation)
    }

    // MARK: Activity

    /// A stream of what happens on this device, until the stream is dropped.
    public func activity() -> AsyncStream<Activity> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: Activity.self, bufferingPolicy: .bufferingNewest(500))
        continuation.onTermination = { [weak self] _ in _ = self?.observers.withLock { $0.removeValue(forKey: id) } }
        observers.withLock { $0[id] = continuation }
        return stream
    }

    private func announce(_ activity: Activity) {
        for observer in observers.withLock({ Array($0.values) }) { observer.yield(activity) }
    }

    // MARK: Edits

    /// Saves a new contact locally and queues it for upload. Throws on invalid input, changing nothing.
    @discardableResult
    public func add(_ contact: Contact, at date: Date = Date()) throws -> Contact {
        let contact = contact.stamped(against: nil, at: date)
        try ContactValidation.validate(contact)
        try store.saveLocal([contact])
        engine.state.add(pendingRecordZoneChanges: [.saveRecord(contact.recordID)])
        return contact
    }

    /// Saves an edited contact; fields that differ from the stored one get a new edit time.
    @discardableResult
    public func update(_ contact: Contact, at date: Date = Date()) throws -> Contact {
        guard let old = try store.contact(contact.id) else { throw ContactError.unknownID(contact.id.uuidString) }
        let contact = contact.stamped(against: old, at: date)
        try ContactValidation.validate(contact)
        if contact == old { return old }
        try store.saveLocal([contact])
        engine.state.add(pendingRecordZoneChanges: [.saveRecord(contact.recordID)])
        return contact
    }

    public func delete(_ id: UUID) throws {
        let entry = try store.deleteLocal(id)
        if case .record(let change) = entry.change { engine.state.add(pendingRecordZoneChanges: [change]) }
    }

    // MARK: Sync

    /// One manual sync: fetch, then send; conflicts found while sending are merged and sent again.
    /// When something was sent, a last fetch brings this device's token past its own changes (and
    /// picks up what others changed meanwhile), so that the next sync fetches only what is new.
    public func sync(fetch: Bool = true, send: Bool = true) async throws {
        do {
            if fetch { try await engine.fetchChanges() }
            let sending = send && !engine.state.pendingRecordZoneChanges.isEmpty
            if send { try await sendUntilSettled() }
            if fetch && sending { try await engine.fetchChanges() }
            try store.setSetting(.lastSync, String(Date().timeIntervalSince1970))
            try store.setSetting(.lastError, nil)
        } catch {
            let error = try explained(error)
            try? store.setSetting(.lastError, "\(error)")
            try? store.setSetting(.lastErrorDate, String(Date().timeIntervalSince1970))
            throw error
        }
    }

    /// A missing passphrase, said in the app's terms rather than the library's.
    private func explained(_ error: any Error) throws -> any Error {
        guard let error = error as? SyncError, error.code == .notAuthenticated, isSignedIn,
            try store.setting(.passphrase) == nil
        else { return error }
        return DeviceError(
            "this device has no passphrase for the account's encrypted contacts: run `contacts account passphrase --set` with the passphrase of your other devices (`contacts account passphrase` on one of them shows it)"
        )
    }

    /// Sends; a conflict, a missing zone or a missing record is fixed by the delegate and the
    /// change is queued again, so a second or third send finishes the job.
    private func sendUntilSettled() async throws {
        for attempt in 1...4 {
            do {
                try await engine.sendChanges()
                return
            } catch let error as SyncError
                where attempt < 4 && [.serverRecordChanged, .zoneNotFound, .unknownItem].contains(error.code)
            {
                continue
            }
        }
    }

    // MARK: Account

    public var isSignedIn: Bool { credentials.token != nil }

    /// The passphrase that opens the account's encrypted contacts, when this device has it.
    public func passphrase() throws -> String? {
        try store.setting(.passphrase)
    }

    /// Creates an account on the server and signs this device in to it. `passphrase` encrypts the
    /// account's contacts; the server never sees it.
    public func signUp(username: String, password: String, passphrase: String) async throws {
        let session = try await AccountClient(serverURL: options.serverURL).signUp(
            username: username, password: password)
        try await adopt(session: session, username: username, passphrase: passphrase)
    }

    /// Signs this device in. A `passphrase` that does not open the account's encrypted contacts ends the
    /// new session and throws, changing nothing here.
    public func signIn(username: String, password: String, passphrase: String) async throws {
        let session = try await AccountClient(serverURL: options.serverURL).signIn(
            username: username, password: password)
        try await adopt(session: session, username: username, passphrase: passphrase)
    }

    /// Gives a signed-in device the account's passphrase (a device of an earlier version has none),
    /// once the server's settings show that it opens the account.
    public func setPassphrase(_ passphrase: String) async throws {
        let token = try signedInToken()
        try await unlock(passphrase, token: token)
        try store.setSetting(.passphrase, passphrase)
        await replaceEngine()
    }

    private func adopt(session: SessionInfo, username: String, passphrase: String) async throws {
        do {
            try await unlock(passphrase, token: session.token)
        } catch {
            try? await AccountClient(serverURL: options.serverURL).signOut(token: session.token)
            throw error
        }
        try store.write { db in
            try ContactStore.setSetting(.token, session.token, db)
            try ContactStore.setSetting(.username, username, db)
            try ContactStore.setSetting(.userRecordName, session.userRecordName, db)
            try ContactStore.setSetting(.passphrase, passphrase, db)
        }
        credentials.token = session.token
        await replaceEngine()
        announce(.accountChanged)
    }

    /// This device's session token; throws when it is signed out.
    private func signedInToken() throws -> String {
        guard let token = credentials.token else {
            throw DeviceError("not signed in: sign in first (`contacts account signin`)")
        }
        return token
    }

    /// Checks that `passphrase` opens the account (creating its encryption settings when it has none).
    private func unlock(_ passphrase: String, token: String) async throws {
        let database = Database(serverURL: options.serverURL, credentials: .token(token))
        do {
            try await keyring(passphrase).unlock(for: database)
        } catch let error as SyncError where error.code == .notAuthenticated {
            throw DeviceError(
                "the passphrase does not open this account's encrypted contacts: give the one your other devices use (`contacts account passphrase` on one of them shows it), or, if it is lost, `contacts account reset-encryption` (which deletes the contacts on the server and uploads this device's)"
            )
        }
    }

    /// A new engine from the saved state, with the keyring of the passphrase held now.
    private func replaceEngine() async {
        await engine.cancelOperations()
        // Never fails for a store that opened: its settings were read before.
        try? makeEngine(state: try store.engineState())
    }

    /// Deletes the account's encrypted data on the server (a lost passphrase), makes `passphrase` the
    /// account's new one, and uploads this device's contacts again, encrypted with it. Other devices see
    /// their zones deleted with reason `encryptedDataReset` and need the new passphrase.
    public func resetEncryptedData(passphrase: String) async throws {
        let token = try signedInToken()
        try await Container(identifier: "contacts", serverURL: options.serverURL, credentials: .token(token))
            .resetEncryptedData()
        try await unlock(passphrase, token: token)
        try store.setSetting(.passphrase, passphrase)
        await replaceEngine()
        try await sync()
    }

    /// Signs out: ends the session on the server (when reachable) and wipes this device's contacts,
    /// as CKSyncEngine's sample does on `signOut`. Contacts on the server stay.
    public func signOut() async throws {
        if let token = credentials.token {
            try? await AccountClient(serverURL: options.serverURL).signOut(token: token)
        }
        try store.write { db in
            try ContactStore.setSetting(.token, nil, db)
            try ContactStore.setSetting(.userRecordName, nil, db)
        }
        credentials.token = nil
        // Without automatic sync nobody notices the store changed: tell the engine now.
        if !options.automaticallySync { try? await engine.fetchChanges() }
        announce(.accountChanged)
    }

    // MARK: Deleting

    /// Removes this device's contacts and sync state; the server keeps its copy, and the next
    /// fetch downloads everything again.
    public func deleteLocalData() async throws {
        await engine.cancelOperations()
        try store.write { db in try ContactStore.wipe(db, engineState: true) }
        try makeEngine(state: nil)
        announce(.contactsChanged)
    }

    /// Deletes the contacts zone on the server, which removes every contact on every device
    /// (this one too, once the server confirms).
    public func deleteServerData() async throws {
        try store.write { db in
            try ContactStore.wipe(db, engineState: false)
            try ContactStore.enqueue(.zone(.deleteZone(Contact.zoneID)), db)
        }
        engine.state.remove(pendingRecordZoneChanges: engine.state.pendingRecordZoneChanges)
        engine.state.add(pendingDatabaseChanges: [.deleteZone(Contact.zoneID)])
        announce(.contactsChanged)
        try await engine.sendChanges()
    }
}

// MARK: - The delegate

extension ContactsDevice: SyncEngineDelegate {
    public func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
        do {
            try handle(event, syncEngine)
        } catch {
            try? store.setSetting(.lastError, "could not save to the local database: \(error)")
        }
        if syncEngine.scheduler != nil {
            switch event {
            case .willSendChanges: outcomes.withLock { $0.began(.send) }
            case .willFetchChanges: outcomes.withLock { $0.began(.fetch) }
            // The scheduler's status says how it ended, once (see followOutcomes).
            case .didSendChanges, .didFetchChanges: return
            default: break
            }
        }
        if let text = Self.describe(event, fetched: fetchedCount) { announce(.event(text, date: Date())) }
    }

    private func handle(_ event: SyncEngine.Event, _ engine: SyncEngine) throws {
        switch event {
        case .stateUpdate(let update):
            // The outbox is the one record of what is pending (makeEngine gives it back to the engine), so
            // the engine's copy of the list is left out: rewriting every pending change at each update made
            // an upload quadratic.
            var state = update.stateSerialization
            state.pendingRecordZoneChanges = []
            state.pendingDatabaseChanges = []
            let data = try JSONEncoder().encode(state)
            try store.setSetting(.engineState, String(decoding: data, as: UTF8.self))

        case .accountChange(let change):
            switch change.changeType {
            case .signIn:
                try queueEverything(engine)
            case .signOut, .switchAccounts:
                try store.write { db in try ContactStore.wipe(db, engineState: false) }
                announce(.contactsChanged)
            }
            announce(.accountChanged)

        case .fetchedDatabaseChanges(let changes):
            for deletion in changes.deletions where deletion.zoneID == Contact.zoneID {
                if deletion.reason == .encryptedDataReset {
                    // The server lost its copy, not the user: keep the contacts and upload them again.
                    try queueEverything(engine)
                    continue
                }
                try store.write { db in try ContactStore.wipe(db, engineState: false) }
                engine.state.remove(pendingRecordZoneChanges: engine.state.pendingRecordZoneChanges)
                announce(.contactsChanged)
            }

        case .fetchedRecordZoneChanges(let changes):
            try applyFetched(changes, engine)

        case .sentDatabaseChanges(let sent):
            try store.write { db in
                for zone in sent.savedZones { try ContactStore.settle(.zone(.saveZone(zone)), version: nil, db) }
                for zoneID in sent.deletedZoneIDs {
                    try ContactStore.settle(.zone(.deleteZone(zoneID)), version: nil, db)
                }
                if let failure = sent.failedZoneSaves.first {
                    try ContactStore.setSetting(.lastError, "\(failure.error)", db)
                }
            }

        case .sentRecordZoneChanges(let sent):
            try applySent(sent, engine)

        case .willFetchChanges:
            fetchedCount.withLock { $0 = 0 }

        default:
            break
        }
    }

    /// Queues the zone and every contact for upload (first sign-in, or the server lost its data).
    private func queueEverything(_ engine: SyncEngine) throws {
        let ids = try store.write { db in
            try ContactStore.enqueue(.zone(.saveZone(RecordZone(zoneID: Contact.zoneID))), db)
            try db.execute(sql: "DELETE FROM serverRecord")
            let ids = try String.fetchAll(db, sql: "SELECT id FROM contact")
            for id in ids {
                try ContactStore.enqueue(.record(.saveRecord(.init(recordName: id, zoneID: Contact.zoneID))), db)
            }
            return ids
        }
        engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: Contact.zoneID))])
        engine.state.add(
            pendingRecordZoneChanges: ids.map { .saveRecord(.init(recordName: $0, zoneID: Contact.zoneID)) })
    }

    private func applyFetched(_ changes: SyncEngine.Event.FetchedRecordZoneChanges, _ engine: SyncEngine) throws {
        fetchedCount.withLock { $0 += changes.modifications.count + changes.deletions.count }
        let requeue = try store.write { db in
            var requeue: [SyncEngine.PendingRecordZoneChange] = []
            var settled: [SyncEngine.PendingRecordZoneChange] = []
            for modification in changes.modifications {
                let (save, settledChange) = try Self.merge(serverRecord: modification.record.value, db)
                if let save { requeue.append(save) }
                if let settledChange { settled.append(settledChange) }
            }
            for deletion in changes.deletions {
                guard let id = UUID(uuidString: deletion.recordID.recordName) else { continue }
                let pending = try Self.outboxKind(of: deletion.recordID, db)
                try ContactStore.putServerRecord(nil, for: id, db)
                if pending == "save" {
                    // Edited here, deleted elsewhere: the edit wins; it goes up as a new record.
                    continue
                }
                try ContactStore.removeContact(id, db)
                try ContactStore.settle(.record(.deleteRecord(deletion.recordID)), version: nil, db)
                settled.append(.deleteRecord(deletion.recordID))
            }
            return (requeue, settled)
        }
        engine.state.remove(pendingRecordZoneChanges: requeue.1)
        engine.state.add(pendingRecordZoneChanges: requeue.0)
        if !changes.modifications.isEmpty || !changes.deletions.isEmpty { announce(.contactsChanged) }
    }

    /// Merges a server record into the local contact. Returns a save to queue when the merge
    /// differs from the server, or a pending change that the server already reflects.
    private static func merge(serverRecord: SyncCore.RecordValue, _ db: GRDB.Database) throws -> (
        save: SyncEngine.PendingRecordZoneChange?, settled: SyncEngine.PendingRecordZoneChange?
    ) {
        if let tag = serverRecord.recordChangeTag,
            tag == (try ContactStore.serverChangeTag(serverRecord.recordID.recordName, db)),
            !Contact.hasPlainFields(serverRecord)
        {
            // This device holds this version already (it saved it, or fetched it before): nothing to merge.
            return (nil, nil)
        }
        guard let remote = try? Contact(record: serverRecord) else { return (nil, nil) }
        let id = remote.id
        let pending = try outboxKind(of: serverRecord.recordID, db)
        let known = try ContactStore.serverRecord(id, db)
        guard let local = try ContactStore.contact(id, db) else {
            if pending == "delete" {
                // Deleted here. The same version coming back keeps it deleted; a newer edit
                // made elsewhere wins over the delete (an edit is never lost silently).
                if known?.recordChangeTag == serverRecord.recordChangeTag { return (nil, nil) }
                try ContactStore.settle(.record(.deleteRecord(serverRecord.recordID)), version: nil, db)
            }
            try ContactStore.put(remote, db)
            try ContactStore.putServerRecord(serverRecord, for: id, db)
            if Contact.hasPlainFields(serverRecord) {
                // Written by a version before encryption: saved again, encrypted.
                try ContactStore.enqueue(.record(.saveRecord(serverRecord.recordID)), db)
                return (
                    .saveRecord(serverRecord.recordID), pending == "delete" ? .deleteRecord(serverRecord.recordID) : nil
                )
            }
            return (nil, pending == "delete" ? .deleteRecord(serverRecord.recordID) : nil)
        }
        let base = known.flatMap { try? Contact(record: $0) }
        let merged = ContactMerge.merge(base: base, local: local, remote: remote)
        try ContactStore.put(merged, db)
        try ContactStore.putServerRecord(serverRecord, for: id, db)
        if merged == remote && !Contact.hasPlainFields(serverRecord) {
            if pending == "save" {
                try ContactStore.settle(.record(.saveRecord(serverRecord.recordID)), version: nil, db)
                return (nil, .saveRecord(serverRecord.recordID))
            }
            return (nil, nil)
        }
        try ContactStore.enqueue(.record(.saveRecord(serverRecord.recordID)), db)
        return (.saveRecord(serverRecord.recordID), nil)
    }

    private static func outboxKind(of recordID: SyncCore.RecordValue.ID, _ db: GRDB.Database) throws -> String? {
        try String.fetchOne(
            db, sql: "SELECT kind FROM outbox WHERE key = ?", arguments: ["record:" + recordID.recordName])
    }

    private func applySent(_ sent: SyncEngine.Event.SentRecordZoneChanges, _ engine: SyncEngine) throws {
        let versions = versionsInFlight.withLock { $0 }
        @Sendable func version(_ change: ContactStore.OutboxEntry.Change) -> Int64? {
            versions[ContactStore.outboxKey(change).key] ?? 0
        }
        let (requeueRecords, requeueZone, changed) = try store.write { db in
            var changed = false
            var requeue: [SyncEngine.PendingRecordZoneChange] = []
            var zone = false
            for record in sent.savedRecords {
                guard let id = UUID(uuidString: record.recordID.recordName) else { continue }
                try ContactStore.putServerRecord(record.value, for: id, db)
                try ContactStore.settle(
                    .record(.saveRecord(record.recordID)), version: version(.record(.saveRecord(record.recordID))), db)
            }
            for recordID in sent.deletedRecordIDs {
                if let id = UUID(uuidString: recordID.recordName) { try ContactStore.putServerRecord(nil, for: id, db) }
                try ContactStore.settle(
                    .record(.deleteRecord(recordID)), version: version(.record(.deleteRecord(recordID))), db)
            }
            for failure in sent.failedRecordSaves {
                let recordID = failure.record.recordID
                guard let id = UUID(uuidString: recordID.recordName) else { continue }
                switch failure.error.code {
                case .serverRecordChanged:
                    if let serverRecord = failure.error.serverRecordValue {
                        let (save, _) = try Self.merge(serverRecord: serverRecord, db)
                        if let save { requeue.append(save) }
                        changed = true
                    }
                case .zoneNotFound:
                    try ContactStore.putServerRecord(nil, for: id, db)
                    try ContactStore.enqueue(.zone(.saveZone(RecordZone(zoneID: recordID.zoneID))), db)
                    try ContactStore.enqueue(.record(.saveRecord(recordID)), db)
                    requeue.append(.saveRecord(recordID))
                    zone = true
                case .unknownItem:
                    try ContactStore.putServerRecord(nil, for: id, db)
                    try ContactStore.enqueue(.record(.saveRecord(recordID)), db)
                    requeue.append(.saveRecord(recordID))
                default:
                    // Kept in the outbox: the next launch tries again; the status shows why.
                    try ContactStore.setSetting(.lastError, "\(failure.error)", db)
                }
            }
            for (recordID, error) in sent.failedRecordDeletes {
                if error.code == .unknownItem || error.code == .zoneNotFound {
                    try ContactStore.settle(.record(.deleteRecord(recordID)), version: nil, db)
                }
            }
            return (requeue, zone, changed)
        }
        if requeueZone { engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: Contact.zoneID))]) }
        engine.state.add(pendingRecordZoneChanges: requeueRecords)
        if changed { announce(.contactsChanged) }
    }

    public func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.RecordZoneChangeBatch?
    {
        let scoped = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
        guard !scoped.isEmpty, let next = try? store.nextBatch(of: scoped) else { return nil }
        // Only what the outbox still holds; anything else is stale (settled before a crash).
        if !next.stale.isEmpty { syncEngine.state.remove(pendingRecordZoneChanges: next.stale) }
        versionsInFlight.withLock { $0 = next.versions }
        guard !next.saves.isEmpty || !next.deletes.isEmpty else { return nil }
        return SyncEngine.RecordZoneChangeBatch(
            recordsToSave: next.saves.map(Record.init), recordIDsToDelete: next.deletes)
    }
}

// MARK: - Describing events for people

extension ContactsDevice {
    static func describe(_ event: SyncEngine.Event, fetched: borrowing Mutex<Int>) -> String? {
        switch event {
        case .stateUpdate: return nil
        case .accountChange(let change):
            switch change.changeType {
            case .signIn(let user): return "signed in as \(user.recordName)"
            case .signOut: return "signed out"
            case .switchAccounts(_, let user): return "switched account to \(user.recordName)"
            }
        case .fetchedDatabaseChanges(let changes):
            let deleted = changes.deletions.map { "\($0.zoneID.zoneName) (\($0.reason.rawValue))" }
            return deleted.isEmpty ? nil : "zone deleted on the server: " + deleted.joined(separator: ", ")
        case .fetchedRecordZoneChanges(let changes):
            let total = fetched.withLock { $0 }
            return
                "fetched \(changes.modifications.count) changes, \(changes.deletions.count) deletions (\(total) so far)"
        case .sentDatabaseChanges(let sent):
            let saved = sent.savedZones.map(\.zoneID.zoneName)
            let deleted = sent.deletedZoneIDs.map(\.zoneName)
            return "sent zones: saved \(saved), deleted \(deleted)"
        case .sentRecordZoneChanges(let sent):
            var text =
                "sent \(sent.savedRecords.count) saves, \(sent.deletedRecordIDs.count) deletions"
                + shortIDs(sent.savedRecords.map(\.recordID) + sent.deletedRecordIDs)
            if let failure = sent.failedRecordSaves.first {
                text +=
                    "; \(sent.failedRecordSaves.count) failed (\(failure.error.code.rawValue) for \(failure.record.recordID.recordName))"
            }
            return text
        case .willFetchChanges: return "fetching"
        case .didFetchChanges: return "fetch done"
        case .willSendChanges: return "sending"
        case .didSendChanges: return "send done"
        case .willFetchRecordZoneChanges(let zone): return "fetching zone \(zone.zoneID.zoneName)"
        case .didFetchRecordZoneChanges(let zone):
            return zone.error.map { "zone \(zone.zoneID.zoneName) failed: \($0.code.rawValue)" }
        }
    }
}

/// " (Contacts/3B8CE1EC, Contacts/…)": the first few record IDs of an event, for the log.
private func shortIDs(_ ids: [SyncCore.RecordValue.ID]) -> String {
    guard !ids.isEmpty else { return "" }
    let shown = ids.prefix(3).map { "\($0.zoneID.zoneName)/\($0.recordName.prefix(8))" }
    return " (" + shown.joined(separator: ", ") + (ids.count > 3 ? ", …" : "") + ")"
}

/// Keeps two processes from opening one device (their engines would send the same outbox).
final class DeviceLock: Sendable {
    private let descriptor: Int32

    init(path: String, deviceName: String) throws {
        descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DeviceError("cannot create the lock file \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw DeviceError(
                "device '\(deviceName)' is open in another contacts process; close it first, or pass another --device")
        }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

/// A device-level failure with a message that says what to do.
public struct DeviceError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
