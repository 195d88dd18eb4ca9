import Foundation
import GRDB
import Logging
import SyncKit
import Synchronization

/// Syncs the tables an app declares, through ``SyncKit/SyncEngine``, with no sync code of the app's own.
///
/// The app opens its GRDB database, runs its migrations and declares its synced tables; this sets up the
/// rest in the same database: triggers capture every insert, update and delete into an outbox in the app's
/// own transactions (a write that committed is sent, even after a crash), rows become records (columns
/// become fields, large BLOBs become assets, foreign keys become references), two engines (the account's
/// own zone, and zones shared with it) send and fetch, and fetched records are written back without being
/// sent again.
///
/// ```swift
/// let sync = try TableSync(database: dbQueue, tables: [SyncedTable("note"), SyncedTable("tag")],
///                          container: Container(identifier: "notes"))
/// try sync.start()
/// try await dbQueue.write { db in try db.execute(sql: "INSERT INTO note (id, title) VALUES (?, ?)", …) }
/// try await sync.sendChanges()     // or let the engine send on its own a moment later
/// ```
///
/// The layer's tables (`synctables_…`, see ``MetadataSchema``) can be read and joined like the app's own.
public final class TableSync: Sendable {
    /// How the sync runs.
    public struct Configuration: Sendable {
        /// The zone of the account that holds the tables' records.
        public var zoneName = "Tables"
        /// BLOB values longer than this many bytes are sent as assets, apart from their record.
        public var assetThreshold = 16 * 1024
        /// Sync on its own: send a moment after a local change, fetch when the server pushes one.
        public var automaticallySync = true
        /// When automatic sync sends and fetches (the debounce, the polls, the backoff).
        public var schedulerPolicy = SyncScheduler.Policy.standard
        /// What holds automatic sync's unhurried work back: by default low battery and a high load, each for
        /// at most the policy's deferral. A test on a busy machine passes none.
        public var schedulerProbes: [any ConditionProbe] = [PowerProbe(), LoadProbe()]
        /// Where assets wait for their upload; by default a directory of this process's own (mode 0700) in
        /// the system's temporary directory, removed with the sync.
        public var assetDirectory: URL?
        /// Called before the rows of a zone the server deleted (or a share that ended) are removed from
        /// the database, with how many rows of each table go: export or copy them here. Return `false` to
        /// keep them (they stop syncing: a later ``resync()`` uploads them again).
        public var willRemoveZone: (@Sendable (RemovedZone) async -> Bool)?

        public init() {}
    }

    /// A zone whose rows are about to be removed from this device.
    public struct RemovedZone: Sendable {
        public let zoneID: RecordZone.ID
        public let reason: ZoneDeletionReason?
        /// Rows that go, by table.
        public let rowCounts: [String: Int]
    }

    /// What the sync is doing, for a status line.
    public struct Status: Sendable, Equatable {
        public var isFetching = false
        public var isSending = false
        /// Local changes not yet on the server.
        public var pendingCount = 0
        /// Fetched records waiting for their parent or their table.
        public var unappliedCount = 0
        /// The last failure, if the last send or fetch failed.
        public var lastError: String?
        /// Whether the engines are running (``start()`` until ``stop()``).
        public var isRunning = false

        /// Sending or fetching (`isSynchronizing`).
        public var isSynchronizing: Bool { isFetching || isSending }
    }

    public let database: any DatabaseWriter
    public let container: Container
    public let configuration: Configuration
    /// Where assets wait for their upload: ``Configuration/assetDirectory``, or a directory of this
    /// process's own (mode 0700) in the temporary directory, so that no other user reads them.
    let assetDirectory: URL
    let schemas: [TableSchema]
    let logger = Logger(label: "synctables")

    struct Engines: Sendable {
        let `private`: SyncEngine
        let shared: SyncEngine
        subscript(scope: DatabaseScope) -> SyncEngine { scope == .shared ? shared : `private` }
    }
    let engines = Mutex<Engines?>(nil)
    /// The changes in each engine's batches on their way, with the outbox version each was read at.
    let inFlight = Mutex<[DatabaseScope: [Record.ID: InFlight]]>([:])
    let statusBroadcast = ValueBroadcast(Status(), bufferingNewest: 8)
    /// Follows the commits that leave changes for the outbox, and tells the engines.
    private let outboxObserver = OutboxObserver()
    /// Whether a count of the outbox for the status is on its way (``countLater()``).
    private let countScheduled = Mutex(false)
    /// Whether this start made sure of the account's keys (``prepareKeys()``).
    let keysPrepared = Mutex(false)

    struct InFlight: Sendable {
        let table: String
        let version: Int64
        /// Digests of the BLOB columns sent as assets, and the files that hold them until the upload.
        var blobDigests: [String: String] = [:]
        var files: [URL] = []
    }

    /// Checks the declared tables (``TableSyncError/schema(_:)`` says what is wrong and what to do),
    /// creates the layer's tables and the triggers, and applies records that waited for a table this
    /// version of the app has now. Syncing starts with ``start()``.
    public init(
        database: any DatabaseWriter, tables: [SyncedTable], container: Container,
        configuration: Configuration = Configuration()
    ) throws {
        self.database = database
        self.container = container
        self.configuration = configuration
        if let directory = configuration.assetDirectory {
            assetDirectory = directory
        } else {
            assetDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "synctables-\(UUID().uuidString)")
        }
        try FileManager.default.createDirectory(
            at: assetDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        schemas = try database.write { db in
            for statement in MetadataSchema.statements { try db.execute(sql: statement) }
            var earlier: [String: [String]] = [:]
            var codes: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT tableName, columns, code FROM synctables_tables") {
                let columns: String = row["columns"]
                earlier[row["tableName"]] = (try? JSONDecoder().decode([String].self, from: Data(columns.utf8))) ?? []
                codes[row["tableName"]] = row["code"]
            }
            var schemas = try TableSchema.readAll(tables, earlier: earlier, db)
            var next = (codes.values.max() ?? 0) + 1
            for index in schemas.indices {
                if let code = codes[schemas[index].name] {
                    schemas[index].code = code
                } else {
                    schemas[index].code = next
                    next += 1
                }
            }
            let shared = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM synctables_state WHERE key LIKE 'permission:%')")
            try MetadataSchema.install(schemas, guards: shared == true, db)
            for schema in schemas {
                let columns = String(decoding: try JSONEncoder().encode(schema.columns), as: UTF8.self)
                try db.execute(
                    sql: """
                        INSERT INTO synctables_tables (tableName, columns, code) VALUES (?, ?, ?)
                        ON CONFLICT (tableName) DO UPDATE SET columns = excluded.columns
                        """,
                    arguments: [schema.name, columns, schema.code])
            }
            return schemas
        }
        outboxObserver.onChange = { [weak self] db in self?.notePending(db) }
        // Records that waited for a table this version has now (their assets wait for applyWaitingRecords()).
        try database.write { db in try self.applying(db) { try self.applyWaiting(db) } }
        refreshCounts()
    }

    deinit {
        if configuration.assetDirectory == nil { try? FileManager.default.removeItem(at: assetDirectory) }
        statusBroadcast.finish()
    }

    /// The declared table `name`.
    func schema(_ name: String) -> TableSchema? { schemas.first { $0.name == name } }

    /// The table whose records are of `recordType`.
    func schema(recordType: String) -> TableSchema? { schemas.first { $0.table.recordType == recordType } }

    /// The account's own zone for the tables.
    public var zoneID: RecordZone.ID { RecordZone.ID(zoneName: configuration.zoneName) }

    // MARK: Lifecycle

    /// Starts the engines: they send what is pending and fetch what changed (on their own with
    /// ``Configuration/automaticallySync``). Does nothing when already started.
    public func start() throws {
        if engines.withLock({ $0 != nil }) { return }
        let states = try database.read { db in
            (
                private: try Self.state(.private, db), shared: try Self.state(.shared, db),
                zoneSaved: try Self.setting("zoneSaved", db) == "1"
            )
        }
        // A table's encrypted columns are sealed fields of its records' type: a plain value the server
        // puts in their place, or an older seal than this device saw, is refused (`recordTampered`).
        var sealed = container.sealedRecordTypes
        for schema in schemas where !schema.table.encryptedColumns.isEmpty {
            sealed.types[schema.table.recordType] = .fields(schema.table.encryptedColumns)
        }
        func make(_ scope: DatabaseScope, _ state: SyncEngine.State.Serialization?) -> SyncEngine {
            var database = container.database(with: scope)
            database.sealedRecordTypes = sealed
            var engineConfiguration = SyncEngine.Configuration(
                database: database, stateSerialization: state, delegate: self)
            engineConfiguration.automaticallySync = configuration.automaticallySync
            engineConfiguration.schedulerPolicy = configuration.schedulerPolicy
            engineConfiguration.schedulerProbes = configuration.schedulerProbes
            return SyncEngine(engineConfiguration)
        }
        let made = Engines(private: make(.private, states.private), shared: make(.shared, states.shared))
        if !states.zoneSaved, !made.private.state.pendingDatabaseChanges.contains(.saveZone(RecordZone(zoneID: zoneID)))
        {
            made.private.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: zoneID))])
        }
        engines.withLock { $0 = made }
        // Observed only while running: GRDB asks every observer about every statement the app runs.
        try database.writeWithoutTransaction { db in db.add(transactionObserver: outboxObserver) }
        try database.read { db in
            notePending(db)
            try updateCounts(db)
        }
        statusBroadcast.update { $0.isRunning = true }
    }

    /// Stops the engines (work on its way is cancelled; what it did not finish stays pending). Local
    /// writes are still captured, and sent after the next ``start()``.
    public func stop() async {
        try? await database.writeWithoutTransaction { db in db.remove(transactionObserver: self.outboxObserver) }
        guard
            let stopped = engines.withLock({ current -> Engines? in
                defer { current = nil }
                return current
            })
        else {
            return
        }
        await stopped.private.cancelOperations()
        await stopped.shared.cancelOperations()
        inFlight.withLock { $0 = [:] }
        keysPrepared.withLock { $0 = false }
        statusBroadcast.update {
            $0.isRunning = false
            $0.isFetching = false
            $0.isSending = false
        }
    }

    func running() throws -> Engines {
        guard let current = engines.withLock({ $0 }) else {
            throw TableSyncError.notStarted("the table sync is not running; call start() first")
        }
        return current
    }

    /// The status now, and each change of it.
    public var status: Status { statusBroadcast.current }
    public var statusUpdates: AsyncStream<Status> { statusBroadcast.subscribe() }

    /// Sends every pending change now, in both databases, and settles conflicts by each table's policy
    /// (their merged rows are sent in the same call). Throws what the server refused, after recording it
    /// (``pendingChanges()`` says which change is held and why).
    public func sendChanges() async throws {
        let current = try running()
        for scope in [DatabaseScope.private, .shared] {
            // A conflict's merge is sent by the next round; a few rounds settle any burst of edits.
            var rounds = 0
            while true {
                do {
                    try await current[scope].sendChanges()
                    break
                } catch let error as SyncError where error.code == .serverRecordChanged && rounds < 4 {
                    rounds += 1
                }
            }
        }
    }

    /// Fetches every change from the server now, in both databases, and applies it.
    public func fetchChanges() async throws {
        let current = try running()
        try await current.private.fetchChanges()
        try await current.shared.fetchChanges()
    }

    /// Fetches, then sends.
    public func sync() async throws {
        try await fetchChanges()
        try await sendChanges()
    }

    // MARK: The outbox's state, told to the engines

    /// Tells each engine whether the outbox holds changes for it, and updates the counts.
    func notePending(_ db: Database) {
        guard let current = engines.withLock({ $0 }) else { return }
        do {
            let waiting = try Outbox.waiting(db)
            if current.private.state.hasPendingUntrackedChanges != waiting.own {
                current.private.state.hasPendingUntrackedChanges = waiting.own
            }
            if current.shared.state.hasPendingUntrackedChanges != waiting.shared {
                current.shared.state.hasPendingUntrackedChanges = waiting.shared
            }
        } catch {
            logger.error("reading the outbox failed: \(error)")
        }
        countLater()
    }

    /// Counts the outbox for the status after the write that called this returned: counting the changes
    /// not folded yet (each row once) would cost a large write as much again. One count waits at a time;
    /// it starts by clearing its flag, so a commit during it asks for another.
    private func countLater() {
        guard
            countScheduled.withLock({ scheduled in
                defer { scheduled = true }
                return !scheduled
            })
        else { return }
        database.asyncRead { [weak self] result in
            guard let self else { return }
            self.countScheduled.withLock { $0 = false }
            do { try self.updateCounts(result.get()) } catch {
                self.logger.error("counting the outbox failed: \(error)")
            }
        }
    }

    func refreshCounts() {
        try? database.read { db in try updateCounts(db) }
    }

    func updateCounts(_ db: Database) throws {
        let pending = try Outbox.count(db)
        let unapplied = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM synctables_unapplied") ?? 0
        statusBroadcast.update {
            $0.pendingCount = pending
            $0.unappliedCount = unapplied
        }
    }

    // MARK: Settings

    static func setting(_ key: String, _ db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT CAST(value AS TEXT) FROM synctables_state WHERE key = ?", arguments: [key])
    }

    static func setSetting(_ key: String, _ value: (any DatabaseValueConvertible)?, _ db: Database) throws {
        if let value {
            try db.execute(
                sql: "INSERT OR REPLACE INTO synctables_state (key, value) VALUES (?, ?)", arguments: [key, value])
        } else {
            try db.execute(sql: "DELETE FROM synctables_state WHERE key = ?", arguments: [key])
        }
    }

    static func state(_ scope: DatabaseScope, _ db: Database) throws -> SyncEngine.State.Serialization? {
        guard
            let data = try Data.fetchOne(
                db, sql: "SELECT value FROM synctables_state WHERE key = ?", arguments: ["engine.\(scope)"])
        else { return nil }
        return try? JSONDecoder().decode(SyncEngine.State.Serialization.self, from: data)
    }

    /// Runs `body` in a write whose changes are not queued (what the server sent): the app's changes are
    /// folded into the outbox first (``Outbox/fold(_:)``), and what the triggers append during `body` is
    /// removed after it.
    func applying<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try Outbox.fold(db)
        try db.execute(sql: "INSERT INTO synctables_applying (flag) VALUES (1)")
        let result = try body()
        // What the triggers appended since the fold is this write's own: the app cannot write meanwhile.
        try db.execute(sql: "DELETE FROM synctables_changes; DELETE FROM synctables_applying")
        return result
    }

    /// This device's clock's offset from the server's (server minus device), learned from answers.
    static func clockOffset(_ db: Database) throws -> TimeInterval {
        try setting("clockOffset", db).flatMap(Double.init) ?? 0
    }
}
