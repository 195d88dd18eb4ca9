import ContactsLocal
import ContactsModel
import Foundation
import GRDB
import LocalSystem
import SyncCore
import SyncCrypto
import SyncKit
import Synchronization

/// One device of the contacts app: its local store, its sync engines, and the delegate that keeps them in
/// step, as Apple's CKSyncEngine sample does (and more carefully).
///
/// The device opens and owns; it syncs (``sync(fetch:send:)``, `Sync/`) and reports (``status``,
/// ``activity()``). Its other jobs are roles, found by name: ``contacts``, ``account``, ``books`` and
/// ``interchange`` (``DeviceRole``). Apps read through ``reader``. Used by the CLI, the TUI and the
/// CardDAV bridge alike. One process at a time opens a device (a lock file says so).
public final class ContactsDevice: Sendable {
    public struct Options: Sendable {
        public var dataDirectory: String
        public var deviceName: String
        public var serverURL: URL
        public var automaticallySync: Bool
        /// How costly the account key's derivation is when this device is the account's first to
        /// encrypt (tests pass cheap parameters; every other device uses the account's).
        public var keyDerivation: ScryptParameters
        /// This device's clock (tests give devices clocks that run ahead or behind).
        public var clock: @Sendable () -> Date
        /// Whether automatic sync holds its work while the machine is busy (the one-minute load per core above
        /// ``LoadProbe``'s threshold), for up to a minute, as it does on battery. False sends at once.
        public var holdsWorkUnderLoad: Bool
        /// The server's version check, when the opener began it before the device opened
        /// (``ContactsDevice/beginServerVersionCheck(serverURL:)``), so that its request and the HTTP
        /// client's start overlap the opening of the device's file; nil asks at the first sync.
        public var serverVersionCheck: Task<String?, Never>?

        public init(
            dataDirectory: String, deviceName: String, serverURL: URL, automaticallySync: Bool,
            keyDerivation: ScryptParameters = .default, clock: @escaping @Sendable () -> Date = { Date() },
            holdsWorkUnderLoad: Bool = true
        ) {
            self.dataDirectory = dataDirectory
            self.deviceName = deviceName
            self.serverURL = serverURL
            self.automaticallySync = automaticallySync
            self.keyDerivation = keyDerivation
            self.clock = clock
            self.holdsWorkUnderLoad = holdsWorkUnderLoad
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
    /// The store; apps read through ``reader`` and write through the device's roles (the package's own
    /// tools, such as the benchmarks, fill it directly).
    package let store: ContactStore
    public let credentials: CredentialStore
    /// The engines on the private database (the person's own books) and on the shared one (books
    /// others share with them), as CKSyncEngine apps run one per database.
    private let engineBox = Mutex<(private: SyncEngine, shared: SyncEngine)?>(nil)
    private let lock: FileLock
    /// Where each engine's send has got to in the outbox (the engine sends the next batch while one is
    /// answered).
    let sends = Mutex<[DatabaseScope: OutboxSend]>([:])
    private let observers = Mutex<[UUID: AsyncStream<Activity>.Continuation]>([:])
    let fetchedCount = Mutex(0)
    /// The first ``checkServerVersionOnce()``'s request, which later calls wait for.
    let serverVersionCheck = Mutex<Task<Void, Never>?>(nil)
    /// Each engine's sends and fetches that began, to log each one's outcome once (see ``SyncOutcomeLog``).
    let outcomes = Mutex<[DatabaseScope: SyncOutcomeLog]>([:])
    private let outcomeTasks = Mutex<[Task<Void, Never>]>([])
    /// What ``statusUpdates`` delivers. It belongs to the device, not to an engine, so subscribers keep their
    /// stream when the device replaces its engines; a status replaces the one before, so a slow reader gets
    /// only the newest.
    let statusBroadcast = ValueBroadcast(DeviceStatus(), bufferingNewest: 1)

    /// The engine on the private database (the device replaces it when its local data is deleted: apps follow
    /// ``statusUpdates`` instead).
    package var engine: SyncEngine { engineBox.withLock { $0!.private } }
    /// The engine on the shared database.
    package var sharedEngine: SyncEngine { engineBox.withLock { $0!.shared } }
    /// Reads the device's contacts, books, conflicts and settings, each call in a read transaction of its own.
    public var reader: ContactsReader { ContactsReader(store) }
    /// Whether the device syncs by itself (a scheduler decides when), rather than only when asked.
    public var syncsAutomatically: Bool { engine.scheduler != nil }
    /// The device's sync status now.
    public var status: DeviceStatus { statusBroadcast.current }
    /// The device's sync status: the current one first, then each change, until the stream is dropped. It
    /// outlives the device's engines: a subscriber keeps it when deleting local data replaces them.
    public var statusUpdates: AsyncStream<DeviceStatus> { statusBroadcast.subscribe() }
    var engines: [SyncEngine] { engineBox.withLock { [$0!.private, $0!.shared] } }
    public var name: String { options.deviceName }
    /// How many changes the fetch in progress (or the last one) has received so far, for progress displays.
    public var fetchedSoFar: Int { fetchedCount.withLock { $0 } }

    public init(_ options: Options) throws {
        self.options = options
        // Before anything in it is read: the directory must be the user's alone (created so when missing).
        try DataDirectory.prepare(options.dataDirectory)
        let layout = DataDirectory.Layout(options.dataDirectory)
        lock = try FileLock.device(path: layout.deviceLock(options.deviceName), deviceName: options.deviceName)
        store = try ContactStore(path: layout.deviceFile(options.deviceName))
        credentials = CredentialStore(token: try store.setting(.token))
        if try store.setting(.deviceID) == nil { try store.setSetting(.deviceID, UUID.random().uuidString) }
        if try store.setting(.serverURL) != options.serverURL.absoluteString {
            try store.setSetting(.serverURL, options.serverURL.absoluteString)
        }
        // Before the engine exists: makeEngine gives it the whole outbox.
        try store.write { transaction in try ContactStore.queuePlainRecordsForEncryption(transaction) }
        try makeEngines(states: (try store.engineState(.engineState), try store.engineState(.sharedEngineState)))
        if options.automaticallySync { Task { [weak self] in await self?.checkServerVersionOnce() } }
    }

    deinit {
        outcomeTasks.withLock { tasks in
            for task in tasks { task.cancel() }
        }
        engineBox.withLock { $0 = nil }
        statusBroadcast.finish()
    }

    func makeEngines(states: (private: SyncEngine.State.Serialization?, shared: SyncEngine.State.Serialization?))
        throws
    {
        let keyring = try store.setting(.passphrase).map(keyring)
        func engine(_ scope: DatabaseScope, state: SyncEngine.State.Serialization?) throws -> SyncEngine {
            let database = Database(
                serverURL: options.serverURL, credentials: .store(credentials), scope: scope,
                deviceID: try store.setting(.deviceID), keyring: keyring, sealedRecordTypes: Self.sealedRecordTypes,
                assetCache: photos.downloads)
            var configuration = SyncEngine.Configuration(database: database, stateSerialization: state, delegate: self)
            configuration.automaticallySync = options.automaticallySync
            if !options.holdsWorkUnderLoad { configuration.schedulerProbes.removeAll { $0 is LoadProbe } }
            // The outbox is the one record of what is pending: the saved states leave the lists out.
            configuration.serializesPendingChanges = false
            let engine = SyncEngine(configuration)
            // The outbox is the one list of record changes to send: the engine only hears that it holds
            // some, and the delegate reads each batch from it. Zone changes, a few, the engine tracks.
            let pending = try store.hasPendingRecords(in: scope)
            if engine.state.hasPendingUntrackedChanges != pending { engine.state.hasPendingUntrackedChanges = pending }
            return engine
        }
        let engines = (
            private: try engine(.private, state: states.private), shared: try engine(.shared, state: states.shared)
        )
        let delta = OutboxDelta(steps: try store.pendingZoneChanges().map { .queued($0) })
        engines.private.state.follow(delta.scoped(.private))
        engines.shared.state.follow(delta.scoped(.shared))
        engineBox.withLock { $0 = engines }
        followOutcomes(of: [engines.private, engines.shared])
    }

    /// Stops both engines' work (before they are replaced).
    func cancelEngines() async {
        for engine in engines { await engine.cancelOperations() }
    }

    /// Logs the outcome of each send and fetch from the engines' schedulers' statuses, which know it (an engine
    /// event does not), and passes the private engine's statuses on to ``statusUpdates``. Without a scheduler,
    /// `didSendChanges` and `didFetchChanges` are logged as "done" instead.
    private func followOutcomes(of engines: [SyncEngine]) {
        outcomes.withLock { $0 = [:] }
        // The new scheduler's stream starts with its current status; until then, none (or none at all).
        statusBroadcast.update { $0.scheduler = nil }
        refreshStatusCounts()
        let tasks = engines.compactMap { engine in
            engine.scheduler.map { scheduler in
                let (updates, scope) = (scheduler.statusUpdates, engine.database.scope)
                return Task { [weak self] in
                    for await status in updates {
                        guard let self else { return }
                        let lines = self.outcomes.withLock { $0[scope, default: .of(scope)].lines(for: status) }
                        // The status pane shows the private engine's schedule and outcome; a shared book's
                        // fetch that failed is said in the log.
                        if scope == .private {
                            let failure = lines.last { $0.isError }?.text
                            self.statusBroadcast.update { device in
                                device.scheduler = SyncSchedule(status)
                                if !lines.isEmpty {
                                    device.lastOutcome = DeviceStatus.Outcome(date: Date(), failure: failure)
                                }
                            }
                            self.refreshStatusCounts()
                        }
                        for line in lines {
                            self.announce(
                                line.isError ? .failure(line.text, date: Date()) : .event(line.text, date: Date()))
                        }
                    }
                }
            }
        }
        outcomeTasks.withLock { current in
            for task in current { task.cancel() }
            current = tasks
        }
    }

    /// A keyring for `passphrase` that keeps the account key it derives in this device's file, beside the
    /// passphrase, so that the next command does not run scrypt again.
    func keyring(_ passphrase: String) -> Keyring {
        let store = self.store
        let derivedKeys = Keyring.DerivedKeys(
            load: { id in
                guard let kept = try? store.setting(.derivedAccountKey), kept.hasPrefix(id + ":") else { return nil }
                return Data(base64Encoded: String(kept.dropFirst(id.count + 1)))
            },
            save: { id, key in try? store.setSetting(.derivedAccountKey, id + ":" + key.base64EncodedString()) })
        let knownKeys = KnownKeys(
            load: { try store.knownKey(for: $0) },
            save: { [weak self] key in
                try store.saveKnownKey(key)
                // A refusal that ends leaves the status.
                self?.refreshStatusCounts()
            },
            changed: { [weak self] change in
                try? store.noteKeyChange(change)
                self?.announce(
                    change.isRefused
                        ? .failure(change.description, date: Date()) : .event("warning: \(change)", date: Date()))
                self?.refreshStatusCounts()
            })
        return Keyring(
            passphrase: passphrase, parameters: options.keyDerivation, derivedKeys: derivedKeys, knownKeys: knownKeys)
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

    func announce(_ activity: Activity) {
        for observer in observers.withLock({ Array($0.values) }) { observer.yield(activity) }
    }

    /// Reads the conflict and tamper counts again for ``statusUpdates`` (after each write: two counts of small
    /// tables).
    func refreshStatusCounts() {
        guard let conflicts = try? store.conflictCount(), let tampered = try? store.tamperedCount(),
            let refused = try? store.refusedKeys()
        else { return }
        statusBroadcast.update { status in
            status.conflictCount = conflicts
            status.tamperedCount = tampered
            status.refusedKeys = refused.map(\.description)
        }
    }

    // MARK: Writing

    /// Runs `body` in one write transaction of the store. Once it commits, and before any other write,
    /// the engines follow what it did to the outbox (zone changes, and whether record changes are
    /// pending): the two agree by construction.
    /// `durable: false` for the sync's own bookkeeping (``ContactStore/write(durable:onCommit:_:)``).
    func write<T: Sendable>(durable: Bool = true, _ body: @Sendable (ContactStore.Transaction) throws -> T) throws
        -> T
    {
        let (privateEngine, sharedEngine) = (engine, self.sharedEngine)
        let result = try store.write(
            durable: durable,
            onCommit: { delta in
                privateEngine.state.follow(delta.scoped(.private))
                sharedEngine.state.follow(delta.scoped(.shared))
            }, body)
        refreshStatusCounts()
        return result
    }
}
