import Foundation
import Logging
import SyncClient
import SyncCore
import SyncCrypto
import Synchronization

/// Syncs an app's local data with a database on a sync server. The counterpart of `CKSyncEngine`:
/// the app says *what* changed (``State/add(pendingRecordZoneChanges:)``), the engine decides
/// *when* to talk to the server, batches, retries transient failures, tracks change tokens and
/// reports everything to its delegate as ``Event``s.
public final class SyncEngine: Sendable {
    /// How an engine is set up. Mirrors `CKSyncEngine.Configuration`.
    public struct Configuration: Sendable {
        public var database: Database
        /// The last state the app persisted from a `stateUpdate`, or nil on first launch.
        public var stateSerialization: State.Serialization?
        /// Receives events; held weakly by the engine.
        public var delegate: any SyncEngineDelegate
        /// Whether the engine syncs by itself; tests turn it off and call
        /// ``SyncEngine/fetchChanges(_:)`` and ``SyncEngine/sendChanges(_:)``.
        public var automaticallySync: Bool = true
        /// Timing of automatic syncing (debounce, poll interval, backoff).
        public var schedulerPolicy: SyncScheduler.Policy = .standard
        /// The conditions that hold automatic syncing back: by default low battery and high load.
        /// Tests pass none, so that a busy machine does not hold their syncs for a minute.
        public var schedulerProbes: [any ConditionProbe] = [PowerProbe(), LoadProbe()]
        /// Whether `stateUpdate`'s serializations hold the pending changes, as CKSyncEngine's do. An app
        /// that keeps its own record of what is pending, and gives it to each new engine through
        /// ``State/add(pendingRecordZoneChanges:)``, turns this off: a serialization that holds the
        /// pending list makes the engine copy the whole list at its next change while the app still
        /// holds the serialization, once per batch sent (a tenth of a large upload's work).
        public var serializesPendingChanges = true

        public init(database: Database, stateSerialization: State.Serialization?, delegate: any SyncEngineDelegate) {
            self.database = database
            self.stateSerialization = stateSerialization
            self.delegate = delegate
        }
    }

    /// The database the engine syncs.
    public let database: Database
    /// Pending changes and tokens.
    public let state: State

    private weak let delegate: (any SyncEngineDelegate)?
    private let client: DatabaseClient
    private let events: Mutex<EventQueue?> = Mutex(nil)
    /// Internal rather than private so that tests can see an operation waiting behind another.
    let operations = OperationLock()
    /// Operations running now, so that ``cancelOperations()`` can cancel them; a new generation
    /// cancels those still waiting for the lock.
    private let operationsInFlight = Mutex<(generation: Int, nextKey: Int, tasks: [Int: Task<Void, any Error>])>(
        (0, 0, [:]))
    /// The token last checked with the server and whose account it is; checked again when the
    /// token changes.
    private let verifiedAccount = Mutex<(token: String, user: String)?>(nil)
    private let limits = Mutex<ServerLimits?>(nil)
    /// Names this engine's saves to the server (`X-Writer-ID`), so that its fetches leave
    /// them out: the app has them already, from `sentRecordZoneChanges`. A send that ends without a
    /// sure answer may have saved records the app never heard of: the engine then takes a new ID,
    /// and those come back in the next fetch. A new engine (a relaunch) has a new ID too.
    private let writerID = Mutex(UUID().uuidString)
    private let automatic = Mutex<AutomaticSync?>(nil)
    var automaticSync: AutomaticSync? { automatic.withLock { $0 } }

    /// Decides when this engine syncs by itself; nil without `automaticallySync`. Its
    /// ``SyncScheduler/statusUpdates`` say what it plans and what failed last, for status displays.
    public var scheduler: SyncScheduler? { automaticSync?.scheduler }

    /// Whether the push socket is open (the server tells this engine about changes at once).
    public var isPushConnected: Bool { automaticSync?.pushConnected.withLock { $0 } ?? false }
    let logger: Logger

    /// Creates an engine. With `automaticallySync`, it starts syncing by itself (when signed in).
    public init(_ configuration: Configuration) {
        database = configuration.database
        state = State(
            configuration.stateSerialization, serializesPendingChanges: configuration.serializesPendingChanges)
        delegate = configuration.delegate
        client = DatabaseClient(database: configuration.database)
        logger = Logger(label: "sync-engine")
        let queue = EventQueue(
            deliver: { [weak self] event in
                guard let self, let delegate = self.delegate else { return }
                await delegate.handleEvent(event, syncEngine: self)
            },
            stateSerialization: { [weak self] in
                self?.state.serialization ?? .empty
            }, owner: ObjectIdentifier(self))
        events.withLock { $0 = queue }
        state.onChange.withLock {
            $0 = { [weak self] in
                guard let self else { return }
                self.eventQueue.scheduleStateUpdate()
                self.automaticSync?.localChangesArrived()
            }
        }
        if configuration.automaticallySync {
            let automatic = AutomaticSync(
                engine: self, policy: configuration.schedulerPolicy, probes: configuration.schedulerProbes)
            self.automatic.withLock { $0 = automatic }
            automatic.start(engine: self)
        }
    }

    deinit {
        if let automatic = automaticSync { Task { await automatic.stop() } }
        events.withLock { $0?.finish() }
    }

    private var eventQueue: EventQueue { events.withLock { $0! } }

    // MARK: Manual sync

    /// Fetches changes from the server now, bypassing the scheduler. Returns after the delegate
    /// has handled every event the fetch caused.
    public func fetchChanges(_ options: FetchChangesOptions = .init()) async throws {
        try await reportingToScheduler(.fetch) { reached in
            try await run {
                reached.record(try await self.performFetch(FetchChangesContext(reason: .manual, options: options)))
            }
        }
    }

    /// Sends pending changes now, bypassing the scheduler. Returns after the delegate has handled
    /// every event; throws when a save or delete failed (the failure was reported in
    /// `sentRecordZoneChanges` first).
    public func sendChanges(_ options: SendChangesOptions = .init()) async throws {
        try await reportingToScheduler(.send) { reached in
            try await run {
                reached.record(try await self.performSend(SendChangesContext(reason: .manual, options: options)))
            }
        }
    }

    /// Lets the scheduler learn from a manual run (the server is reachable again, say) without
    /// changing its plan. A run with no account reached no server, and tells it nothing.
    private func reportingToScheduler(
        _ work: SyncScheduler.Work, _ body: (ServerReached) async throws -> Void
    ) async throws {
        let reached = ServerReached()
        do {
            try await body(reached)
            if reached.server { await scheduler?.manualRunFinished(work, error: nil) }
        } catch {
            await scheduler?.manualRunFinished(work, error: error)
            throw error
        }
    }

    /// Tells the engine that its server is probably reachable again: the app restarted it, or learned
    /// that the network is back. The push socket reconnects now instead of after its backoff, and once
    /// it is connected, work held by an offline backoff runs at once. Does nothing without
    /// `automaticallySync` or while the push socket is connected.
    public func reconnect() {
        automaticSync?.reconnect(database)
    }

    /// Cancels the operation running now and those waiting to run: their `fetchChanges()` and
    /// `sendChanges()` calls throw `operationCancelled`. A request already on the wire may still
    /// take effect on the server, as with CKSyncEngine; its change stays pending and the next send
    /// settles it. Automatic syncing stops for good: call this when discarding the engine.
    public func cancelOperations() async {
        await automaticSync?.stop()
        let running = operationsInFlight.withLock { inFlight in
            inFlight.generation += 1
            defer { inFlight.tasks.removeAll() }
            return Array(inFlight.tasks.values)
        }
        for task in running { task.cancel() }
    }

    /// Runs one operation at a time, refusing calls made from inside `handleEvent`.
    func run(_ operation: @escaping @Sendable () async throws -> Void) async throws {
        if EventQueue.deliveringFor == ObjectIdentifier(self) {
            throw SyncError(
                .invalidArguments,
                "fetchChanges() and sendChanges() wait for handleEvent to return, so calling them from inside it would deadlock; start them with Task.detached instead"
            )
        }
        let generation = operationsInFlight.withLock { $0.generation }
        await operations.lock()
        do {
            try await runCancellable(operation, generation: generation)
            await operations.unlock()
        } catch {
            await operations.unlock()
            throw error
        }
    }

    /// Runs `operation` as a task ``cancelOperations()`` can cancel, unless it already cancelled
    /// everything queued since `generation`.
    private func runCancellable(_ operation: @escaping @Sendable () async throws -> Void, generation: Int)
        async throws
    {
        let task = Task { try await operation() }
        let key = operationsInFlight.withLock { inFlight -> Int? in
            guard inFlight.generation == generation else { return nil }
            inFlight.nextKey += 1
            inFlight.tasks[inFlight.nextKey] = task
            return inFlight.nextKey
        }
        guard let key else {
            task.cancel()
            throw SyncError(.operationCancelled, "cancelOperations() cancelled this sync before it started")
        }
        defer { _ = operationsInFlight.withLock { $0.tasks.removeValue(forKey: key) } }
        do {
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        } catch is CancellationError {
            throw SyncError(.operationCancelled, "the sync was cancelled")
        } catch let error as SyncError where error.code == .operationCancelled || task.isCancelled {
            throw SyncError(.operationCancelled, "the sync was cancelled")
        }
    }

    // MARK: Account

    /// Checks who is signed in against the state's last user, emitting account changes.
    /// Returns false when there is no account (the engine stays dormant).
    private func checkAccount() async throws -> Bool {
        let last = state.storage.withLock { $0.lastUserRecordName }
        guard let token = try await database.credentials.token() else {
            verifiedAccount.withLock { $0 = nil }
            if let last {
                state.reset(userRecordName: nil)
                await eventQueue.deliver(
                    .accountChange(.init(changeType: .signOut(previousUser: .init(userRecordName: last)))))
                await eventQueue.deliverStateUpdate()
            }
            return false
        }
        if let verified = verifiedAccount.withLock({ $0 }), verified.token == token, verified.user == last {
            return true
        }
        // The token an earlier launch checked is still the user it was (a token names one user's session):
        // no need to ask the server again. A sign-in, out or switch changes the token.
        let fingerprint = TokenFingerprint.of(token)
        if let last, state.storage.withLock({ $0.verifiedCredential }) == fingerprint {
            verifiedAccount.withLock { $0 = (token, last) }
            return true
        }
        let current = try await client.account().userRecordName
        verifiedAccount.withLock { $0 = (token, current) }
        if last == current {
            state.storage.withLock { $0.verifiedCredential = fingerprint }
            await eventQueue.deliverStateUpdate()
            return true
        }
        let change: Event.AccountChange.ChangeType
        if let last {
            state.reset(userRecordName: current)
            change = .switchAccounts(
                previousUser: .init(userRecordName: last), currentUser: .init(userRecordName: current))
        } else {
            state.signIn(userRecordName: current)
            change = .signIn(currentUser: .init(userRecordName: current))
        }
        state.storage.withLock { $0.verifiedCredential = fingerprint }
        await eventQueue.deliver(.accountChange(.init(changeType: change)))
        await eventQueue.deliverStateUpdate()
        return true
    }

    private func serverLimits() async throws -> ServerLimits {
        if let known = limits.withLock({ $0 }) { return known }
        let fetched = try await client.limits()
        limits.withLock { $0 = fetched }
        return fetched
    }

    // MARK: Send

    /// Sends; false when there is no account, so nothing reached the server.
    @discardableResult
    func performSend(_ context: SendChangesContext) async throws -> Bool {
        guard try await checkAccount() else { return false }
        await eventQueue.deliver(.willSendChanges(.init(context: context)))
        var firstFailure: SyncError?
        do {
            try await sendLoop(context, firstFailure: &firstFailure)
        } catch {
            await eventQueue.deliver(.didSendChanges(.init(context: context)))
            throw error
        }
        await eventQueue.deliver(.didSendChanges(.init(context: context)))
        if let firstFailure { throw firstFailure }
        return true
    }

    /// Sends batch after batch. While one is on its way, the delegate makes the next and the engine
    /// seals and sends it: the server and the device work at once, with at most two batches in flight.
    /// The changes of a batch in flight are left out of the pending lists the delegate reads.
    private func sendLoop(_ context: SendChangesContext, firstFailure: inout SyncError?) async throws {
        let limits = try await serverLimits()
        // A change that failed in this operation is not sent again in it, even if the app queues it
        // again while handling the failure: the app learns of the failure first (sendChanges
        // throws), and the next send carries the retry, as with CKSyncEngine. Nor is a change whose
        // batch is still on its way. Only those are remembered, not every record sent: a send of
        // 100,000 records would otherwise hold them all.
        var attempted = Set<Record.ID>()
        try await withThrowingTaskGroup(of: BatchOutcome.self) { group in
            var inFlight = 0
            /// Waits for one batch in flight; false when it settled nothing, which ends the operation
            /// (a batch that changed nothing pending, all transient failures, would come back forever).
            func finishOne() async throws -> Bool {
                guard let outcome = try await group.next() else { return true }
                inFlight -= 1
                attempted.subtract(outcome.succeeded)
                return outcome.merged(into: &firstFailure)
            }
            sending: while true {
                if inFlight == 0 || state.pendingDatabaseChanges.contains(where: context.options.scope.contains) {
                    // Zones go first: record batches wait for them.
                    while inFlight > 0 {
                        guard try await finishOne() else { break sending }
                    }
                    try await sendDatabaseChanges(context, limits: limits, firstFailure: &firstFailure)
                }
                guard let batch = try await nextBatch(context, attempted: &attempted) else { break }
                let changes =
                    batch.recordsToSave.map { PendingRecordZoneChange.saveRecord($0.recordID) }
                    + batch.recordIDsToDelete.map { .deleteRecord($0) }
                state.beginSending(state.generations(of: changes))
                group.addTask {
                    defer { self.state.endSending(changes) }
                    return try await self.send(batch, limits: limits)
                }
                inFlight += 1
                if inFlight == 2 {
                    guard try await finishOne() else { break }
                }
            }
            while inFlight > 0 { _ = try await finishOne() }
        }
    }

    /// The delegate's next batch, without changes already sent in this operation; nil when there is none.
    private func nextBatch(_ context: SendChangesContext, attempted: inout Set<Record.ID>) async throws
        -> RecordZoneChangeBatch?
    {
        guard let delegate else { return nil }
        let offered = await eventQueue.call {
            await State.$leavesOutSending.withValue(true) {
                await delegate.nextRecordZoneChangeBatch(context, syncEngine: self)
            }
        }
        guard var batch = offered else { return nil }
        batch.recordsToSave.removeAll { attempted.contains($0.recordID) }
        batch.recordIDsToDelete.removeAll { attempted.contains($0) }
        if batch.recordsToSave.isEmpty && batch.recordIDsToDelete.isEmpty { return nil }
        attempted.formUnion(batch.recordsToSave.map(\.recordID) + batch.recordIDsToDelete)
        let outOfScope =
            batch.recordsToSave.map(\.recordID).filter { !context.options.scope.contains($0) }
            + batch.recordIDsToDelete.filter { !context.options.scope.contains($0) }
        if let stray = outOfScope.first {
            throw SyncError(
                .invalidArguments,
                "the delegate's batch holds \(stray), which is outside the send's scope \(context.options.scope)")
        }
        return batch
    }

    /// What sending one batch did: whether it settled any pending change, its first failure, and the
    /// records the server saved or deleted.
    struct BatchOutcome: Sendable {
        var madeProgress: Bool
        var firstFailure: SyncError?
        var succeeded: [Record.ID] = []

        /// This outcome and `other`'s, as one batch's.
        func combined(with other: BatchOutcome) -> BatchOutcome {
            BatchOutcome(
                madeProgress: madeProgress || other.madeProgress, firstFailure: firstFailure ?? other.firstFailure,
                succeeded: succeeded + other.succeeded)
        }

        /// Keeps the first failure of the operation; returns whether the batch made progress.
        func merged(into operationFailure: inout SyncError?) -> Bool {
            operationFailure = operationFailure ?? firstFailure
            return madeProgress
        }
    }

    private func sendDatabaseChanges(
        _ context: SendChangesContext, limits: ServerLimits, firstFailure: inout SyncError?
    )
        async throws
    {
        while true {
            let pending = state.pendingDatabaseChanges.filter { context.options.scope.contains($0) }
            guard !pending.isEmpty else { return }
            let chunk = Array(pending.prefix(limits.maximumItemsPerRequest))
            var saves: [RecordZone] = []
            var deletes: [RecordZone.ID] = []
            for change in chunk {
                switch change {
                case .saveZone(let zone): saves.append(zone)
                case .deleteZone(let id): deletes.append(id)
                }
            }
            let request = ModifyZonesRequest(saves: saves, deletes: deletes)
            let response = try await withRetries { try await self.client.modifyZones(request) }
            // A zone made or deleted here may have a new key (or none): keys held for it are stale.
            database.keyring?.forget(zoneIDs: saves.map(\.zoneID) + deletes)
            // Settled as sent: the zone the server answers may differ (it keeps the key it had).
            let sentSaves = Dictionary(saves.map { ($0.zoneID, $0) }, uniquingKeysWith: { _, last in last })
            var done =
                response.savedZones.compactMap { sentSaves[$0.zoneID].map(PendingDatabaseChange.saveZone) }
                + response.deletedZoneIDs.map(PendingDatabaseChange.deleteZone)
            for failure in response.failedZoneSaves where !failure.error.isTransient {
                done.append(.saveZone(sentSaves[failure.zone.zoneID] ?? failure.zone))
                firstFailure = firstFailure ?? failure.error
            }
            for failure in response.failedZoneDeletes where !failure.error.isTransient {
                done.append(.deleteZone(failure.zoneID))
                firstFailure = firstFailure ?? failure.error
            }
            state.remove(pendingDatabaseChanges: done)
            await eventQueue.deliver(
                .sentDatabaseChanges(
                    .init(
                        savedZones: response.savedZones,
                        failedZoneSaves: response.failedZoneSaves.map { .init(zone: $0.zone, error: $0.error) },
                        deletedZoneIDs: response.deletedZoneIDs,
                        failedZoneDeletes: Dictionary(
                            response.failedZoneDeletes.map { ($0.zoneID, $0.error) }, uniquingKeysWith: { a, _ in a })))
            )
            await eventQueue.deliverStateUpdate()
            if done.isEmpty { return }
        }
    }

    /// Sends one batch (split in halves on `limitExceeded`).
    private func send(_ batch: RecordZoneChangeBatch, limits: ServerLimits) async throws -> BatchOutcome {
        let count = batch.recordsToSave.count + batch.recordIDsToDelete.count
        if count > limits.maximumItemsPerRequest {
            return try await sendHalves(batch, limits: limits)
        }
        // The shared database takes one owner's zones per request.
        let owners = batch.owners
        if owners.count > 1 {
            var outcome = BatchOutcome(madeProgress: false, firstFailure: nil)
            for owner in owners {
                outcome = outcome.combined(with: try await send(batch.only(owner: owner), limits: limits))
            }
            return outcome
        }
        var firstFailure: SyncError?
        let sentGenerations = state.generations(
            of: batch.recordsToSave.map { .saveRecord($0.recordID) } + batch.recordIDsToDelete.map { .deleteRecord($0) }
        )
        let response: ModifyRecordsResponse
        let writer = writerID.withLock { $0 }
        do {
            response = try await database.modifyRecords(
                saving: batch.recordsToSave, deleting: batch.recordIDsToDelete, savePolicy: .ifServerRecordUnchanged,
                atomically: batch.atomicByZone, keepingSentFields: true
            ) { request in
                try await self.withRetries { try await self.client.modifyRecords(request, writerID: writer) }
            }
        } catch let error as SyncError where error.code == .limitExceeded && count > 1 {
            return try await sendHalves(batch, limits: limits)
        } catch {
            writerID.withLock { $0 = UUID().uuidString }
            throw error
        }
        let sent = Dictionary(batch.recordsToSave.map { ($0.recordID, $0) }, uniquingKeysWith: { a, _ in a })
        var settled: [PendingRecordZoneChange] = response.savedRecords.map { .saveRecord($0.recordID) }
        settled += response.deletedRecordIDs.map { .deleteRecord($0) }
        for failure in response.failedRecordSaves where !failure.error.isTransient {
            settled.append(.saveRecord(failure.recordID))
            firstFailure = firstFailure ?? failure.error
        }
        for failure in response.failedRecordDeletes where !failure.error.isTransient {
            settled.append(.deleteRecord(failure.recordID))
            firstFailure = firstFailure ?? failure.error
        }
        state.settle(settled, sentGenerations: sentGenerations)
        let savedRecords: [Record]
        do {
            savedRecords = try await database.incoming(response.savedRecords)
        } catch {
            // Saved, but the app will not hear of it here: its next fetch must bring these back.
            writerID.withLock { $0 = UUID().uuidString }
            throw error
        }
        // A conflict's server record of a sealed type may not go below what the app has seen either.
        let conflicting = response.failedRecordSaves.compactMap(\.error.serverRecordValue)
            .filter { database.sealedRecordTypes.contains($0.recordType) }.map(\.recordID)
        var seen: [Record.ID: UInt64] = [:]
        if !conflicting.isEmpty, let delegate {
            seen = await delegate.lastKnownSealedVersions(of: conflicting, syncEngine: self)
        }
        var failedRecordSaves: [Event.SentRecordZoneChanges.FailedRecordSave] = []
        for failure in response.failedRecordSaves {
            guard let record = sent[failure.recordID] else { continue }
            var error = await database.incoming(failure.error, seenVersion: seen[failure.recordID])
            if error.code == .serverRecordChanged {
                let value = record.value
                error.clientRecordValue = value
                error.ancestorRecordValue = value.ancestor
            }
            failedRecordSaves.append(.init(record: record, error: error))
        }
        await eventQueue.deliver(
            .sentRecordZoneChanges(
                .init(
                    savedRecords: savedRecords,
                    failedRecordSaves: failedRecordSaves,
                    deletedRecordIDs: response.deletedRecordIDs,
                    failedRecordDeletes: Dictionary(
                        response.failedRecordDeletes.map { ($0.recordID, $0.error) }, uniquingKeysWith: { a, _ in a })))
        )
        await eventQueue.deliverStateUpdate()
        return BatchOutcome(
            madeProgress: !settled.isEmpty, firstFailure: firstFailure,
            succeeded: response.savedRecords.map(\.recordID) + response.deletedRecordIDs)
    }

    private func sendHalves(_ batch: RecordZoneChangeBatch, limits: ServerLimits) async throws -> BatchOutcome {
        let saves = batch.recordsToSave
        let deletes = batch.recordIDsToDelete
        let total = saves.count + deletes.count
        let half = total / 2
        let first = RecordZoneChangeBatch(
            recordsToSave: Array(saves.prefix(half)),
            recordIDsToDelete: Array(deletes.prefix(max(0, half - saves.count))),
            atomicByZone: batch.atomicByZone)
        let second = RecordZoneChangeBatch(
            recordsToSave: Array(saves.dropFirst(half)),
            recordIDsToDelete: Array(deletes.dropFirst(max(0, half - saves.count))), atomicByZone: batch.atomicByZone)
        let a = try await send(first, limits: limits)
        return a.combined(with: try await send(second, limits: limits))
    }

    // MARK: Fetch

    /// Fetches; false when there is no account, so nothing reached the server.
    @discardableResult
    func performFetch(_ context: FetchChangesContext) async throws -> Bool {
        guard try await checkAccount() else { return false }
        // With changes waiting, a send follows: the server's limits it needs come beside the fetch.
        async let limitsKnown: Void = learnLimitsIfSending()
        await eventQueue.deliver(.willFetchChanges(.init(context: context)))
        do {
            try await fetchDatabaseChanges(context)
            try await fetchZones(context)
        } catch {
            await eventQueue.deliver(.didFetchChanges(.init(context: context)))
            throw error
        }
        await limitsKnown
        await eventQueue.deliver(.didFetchChanges(.init(context: context)))
        return true
    }

    /// Fetches the server's limits when they are not known yet and changes are waiting to be sent. A failure
    /// is left to the send, which asks again and says why.
    private func learnLimitsIfSending() async {
        guard state.storage.withLock({ $0.hasChangesToSend }), limits.withLock({ $0 }) == nil else { return }
        _ = try? await serverLimits()
    }

    private func fetchDatabaseChanges(_ context: FetchChangesContext) async throws {
        while true {
            let token = state.storage.withLock { $0.databaseToken }
            let page: FetchDatabaseChangesResponse
            do {
                page = try await withRetries {
                    try await self.client.fetchDatabaseChanges(FetchDatabaseChangesRequest(since: token))
                }
            } catch let error as SyncError where error.code == .changeTokenExpired && token != nil {
                state.storage.withLock { $0.databaseToken = nil }
                continue
            }
            // Every zone is recorded, in scope or not: the database token moves past them all, and
            // a later fetch with another scope must still find them in zoneIDsWithUnfetchedServerChanges.
            let modified = page.modifications
            let deleted = page.deletions
            state.storage.withLock { storage in
                storage.databaseToken = page.changeToken
                storage.zoneIDsWithUnfetchedServerChanges.formUnion(modified)
                for deletion in deleted {
                    storage.zoneTokens[deletion.zoneID] = nil
                    storage.zoneIDsWithUnfetchedServerChanges.remove(deletion.zoneID)
                }
            }
            // Keys fetched before a reset open nothing written after it; a deleted zone's key is gone.
            if deleted.contains(where: { $0.reason == .encryptedDataReset }) { database.keyring?.forget() }
            // A changed zone may have a new key version (its owner rotated it): new values are sealed with it.
            database.keyring?.forget(zoneIDs: deleted.map(\.zoneID) + modified)
            if !modified.isEmpty || !deleted.isEmpty {
                await eventQueue.deliver(
                    .fetchedDatabaseChanges(
                        .init(
                            modifications: modified.map { .init(zoneID: $0) },
                            deletions: deleted.map { .init(zoneID: $0.zoneID, reason: $0.reason) })))
            }
            await eventQueue.deliverStateUpdate()
            if !page.moreComing { return }
        }
    }

    private func fetchZones(_ context: FetchChangesContext) async throws {
        let pending = state.storage.withLock { $0.zoneIDsWithUnfetchedServerChanges }
            .filter { context.options.scope.contains($0) }
        let prioritized = context.options.prioritizedZoneIDs.filter { pending.contains($0) }
        let ordered = prioritized + pending.subtracting(prioritized).sorted()
        var options = context.options
        for zoneID in ordered {
            // The delegate may narrow or reorder what is left before every request.
            if let delegate {
                options = await delegate.nextFetchChangesOptions(
                    FetchChangesContext(reason: context.reason, options: options), syncEngine: self)
            }
            guard options.scope.contains(zoneID) else { continue }
            await eventQueue.deliver(.willFetchRecordZoneChanges(.init(zoneID: zoneID)))
            var zoneError: SyncError?
            do {
                try await fetchZone(zoneID)
                state.storage.withLock { _ = $0.zoneIDsWithUnfetchedServerChanges.remove(zoneID) }
            } catch let error as SyncError where error.code == .zoneNotFound {
                zoneError = error
                state.storage.withLock { storage in
                    storage.zoneIDsWithUnfetchedServerChanges.remove(zoneID)
                    storage.zoneTokens[zoneID] = nil
                }
            } catch let error as SyncError {
                zoneError = error
            }
            await eventQueue.deliver(.didFetchRecordZoneChanges(.init(zoneID: zoneID, error: zoneError)))
            if let zoneError, zoneError.isTransient { throw zoneError }
        }
        await eventQueue.deliverStateUpdate()
    }

    /// Fetches a zone's changes page by page. The next page is requested while this one is opened and
    /// handed to the app, so the server's work and the app's overlap; pages still reach the app in order,
    /// and the zone's token moves only past pages the app has had.
    private func fetchZone(_ zoneID: RecordZone.ID) async throws {
        var page = try await fetchPage(zoneID, since: state.storage.withLock { $0.zoneTokens[zoneID] })
        while true {
            let (moreComing, nextToken) = (page.moreComing, page.changeToken)
            async let following = moreComing ? fetchPage(zoneID, since: nextToken) : nil
            if !page.modifications.isEmpty || !page.deletions.isEmpty {
                // Records of sealed types are checked against the versions the app has seen.
                let sealedIDs = page.modifications.filter { database.sealedRecordTypes.contains($0.recordType) }
                    .map(\.recordID)
                var seen: [Record.ID: UInt64] = [:]
                if !sealedIDs.isEmpty, let delegate {
                    seen = await delegate.lastKnownSealedVersions(of: sealedIDs, syncEngine: self)
                }
                var modified: [Event.FetchedRecordZoneChanges.Modification] = []
                var refused: [Event.FetchedRecordZoneChanges.FailedRecordFetch] = []
                for (arrived, result) in try await database.incomingChecked(page.modifications, seenVersions: seen) {
                    switch result {
                    case .success(let record): modified.append(.init(record: record))
                    case .failure(let error):
                        logger.warning(
                            "refused a fetched record",
                            metadata: ["record": "\(arrived.recordID)", "error": "\(error)"])
                        refused.append(.init(record: arrived, error: error))
                    }
                }
                await eventQueue.deliver(
                    .fetchedRecordZoneChanges(
                        .init(
                            modifications: modified,
                            deletions: page.deletions.map { .init(recordID: $0.recordID, recordType: $0.recordType) },
                            failedRecordFetches: refused)))
            }
            state.storage.withLock { $0.zoneTokens[zoneID] = page.changeToken }
            await eventQueue.deliverStateUpdate()
            guard let next = try await following else { return }
            page = next
        }
    }

    /// One page of a zone's changes after `token`; an expired token starts the zone over from the beginning.
    private func fetchPage(_ zoneID: RecordZone.ID, since token: ServerChangeToken?) async throws
        -> FetchZoneChangesResponse
    {
        do {
            return try await withRetries {
                // This engine's own saves are left out: the app had them in sentRecordZoneChanges.
                try await self.client.fetchZoneChanges(
                    FetchZoneChangesRequest(
                        zoneID: zoneID, since: token, excludingWriter: self.writerID.withLock { $0 }))
            }
        } catch let error as SyncError where error.code == .changeTokenExpired && token != nil {
            state.storage.withLock { $0.zoneTokens[zoneID] = nil }
            return try await fetchPage(zoneID, since: nil)
        }
    }

    // MARK: Retries

    /// Retries transient failures with exponential backoff and jitter, honouring `retryAfter`,
    /// a bounded number of times; then the error goes to the caller.
    func withRetries<T: Sendable>(_ attempt: @Sendable () async throws -> T) async throws -> T {
        var delay = 0.05
        for attemptNumber in 1... {
            try Task.checkCancellation()
            do {
                return try await attempt()
            } catch let error as SyncError
                where error.isTransient && error.code != .notAuthenticated && attemptNumber < 8
            {
                let jittered = Double.random(in: 0...delay)
                let wait = max(jittered, error.retryAfter ?? 0)
                logger.debug("retrying after transient error", metadata: ["error": "\(error)", "wait": "\(wait)"])
                try await Task.sleep(for: .seconds(wait))
                delay = min(delay * 2, 5)
            }
        }
        fatalError("unreachable")
    }
}

extension SyncEngine.State.Serialization {
    /// An empty serialization (a new engine's state).
    static var empty: Self {
        Self(
            pendingRecordZoneChanges: [], pendingDatabaseChanges: [], hasPendingUntrackedChanges: false,
            zoneIDsWithUnfetchedServerChanges: [], databaseChangeToken: nil, zoneChangeTokens: [],
            lastUserRecordName: nil)
    }
}
