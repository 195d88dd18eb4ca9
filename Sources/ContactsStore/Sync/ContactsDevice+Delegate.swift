import ContactsModel
import Foundation
import GRDB
import SyncCore
import SyncKit
import Synchronization

/// The engine's delegate: each event written to the store in one transaction, and the next batch to
/// send read from it.
extension ContactsDevice: SyncEngineDelegate {
    public func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
        do {
            try await handle(event, scope: syncEngine.database.scope)
        } catch {
            try? store.setSetting(.lastError, "could not save to the local database: \(error)")
        }
        // An engine's scheduler says how each of its sends and fetches ended (see followOutcomes): the events
        // that end them come whether they failed or not, as CKSyncEngine's do, so they cannot say "done".
        if syncEngine.scheduler != nil {
            let scope = syncEngine.database.scope
            switch event {
            case .willSendChanges: outcomes.withLock { $0[scope, default: .of(scope)].began(.send) }
            case .willFetchChanges: outcomes.withLock { $0[scope, default: .of(scope)].began(.fetch) }
            case .didSendChanges, .didFetchChanges: return
            default: break
            }
        }
        if let text = Self.describe(event, fetched: fetchedCount) { announce(.event(text, date: Date())) }
    }

    private func handle(_ event: SyncEngine.Event, scope: DatabaseScope) async throws {
        switch event {
        case .stateUpdate(let update):
            // The outbox is the one record of what is pending (makeEngine gives it back to the engine), so
            // the engine's copy of the list is left out: rewriting every pending change at each update made
            // an upload quadratic.
            var state = update.stateSerialization
            state.pendingRecordZoneChanges = []
            state.pendingDatabaseChanges = []
            state.hasPendingUntrackedChanges = false
            // Sorted keys: the same state is the same text, so an unchanged state is not written again (the
            // order JSONEncoder wrote keys in varied, and a send wrote the state twice a batch, a commit each).
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let text = String(decoding: try encoder.encode(state), as: UTF8.self)
            let key: Setting = scope == .shared ? .sharedEngineState : .engineState
            // A fetch that found nothing new, or a send, leaves the state as it was: no write.
            if try store.setting(key) != text { try store.setSetting(key, text, durable: false) }

        case .accountChange(let change):
            switch change.changeType {
            case .signIn:
                // The shared database holds nothing of this device's to upload.
                if scope == .private { try queueEverything() }
            case .signOut:
                // The contacts and the outbox stay for the next sign-in (``signOut()`` removed the secrets).
                break
            case .switchAccounts:
                try write { transaction in try transaction.wipe(engineState: false) }
                announce(.contactsChanged)
            }
            announce(.accountChanged)

        case .fetchedDatabaseChanges(let changes):
            try applyFetched(changes)

        case .fetchedRecordZoneChanges(let changes):
            try await applyFetched(changes)

        case .sentDatabaseChanges(let sent):
            try write(durable: false) { transaction in
                for zone in sent.savedZones { try transaction.settle(.zone(.saveZone(zone))) }
                for zoneID in sent.deletedZoneIDs { try transaction.settle(.zone(.deleteZone(zoneID))) }
                if let failure = sent.failedZoneSaves.first {
                    try ContactStore.setSetting(.lastError, "\(failure.error)", transaction.db)
                }
            }

        case .sentRecordZoneChanges(let sent):
            try applySent(sent, scope: scope)

        case .willFetchChanges:
            fetchedCount.withLock { $0 = 0 }

        case .willSendChanges:
            sends.withLock { $0[scope] = OutboxSend() }

        case .didSendChanges:
            sends.withLock { $0[scope] = nil }
            try notePendingRecords(scope)

        default:
            break
        }
    }

    /// Queues the person's books and their contacts for upload (first sign-in, or the server lost its data).
    private func queueEverything() throws {
        try write { transaction in
            try transaction.db.execute(sql: "DELETE FROM serverRecord")
            for book in try ContactStore.books(transaction.db) where book.isOwn {
                try transaction.queueUpload(of: book)
            }
        }
    }

    /// How many changes a batch holds: what a server takes in one request by default (``ServerLimits``),
    /// rather than CKSyncEngine's 250, so that a large upload makes fewer requests and commits on both
    /// sides. The engine splits a batch larger than its server takes (``ServerLimits``).
    static let batchSize = 400

    public func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.RecordZoneChangeBatch?
    {
        let scope = syncEngine.database.scope
        let send = sends.withLock { $0[scope] ?? OutboxSend() }
        guard
            let next = try? store.nextBatch(
                after: send.cursor, in: scope, device: name, maximumCount: Self.batchSize,
                skipping: { send.inFlight[$0] != nil }, where: context.options.scope.contains)
        else { return nil }
        sends.withLock { sends in
            sends[scope, default: OutboxSend()].cursor = next.cursor
            sends[scope, default: OutboxSend()].inFlight.merge(next.versions) { _, latest in latest }
        }
        if !next.orphans.isEmpty {
            // Saves of items no longer stored (an older release could leave some): nothing to send.
            try? write(durable: false) { transaction in
                for orphan in next.orphans { try transaction.settle(orphan.change, version: orphan.version) }
            }
        }
        guard !next.isEmpty else { return nil }
        return SyncEngine.RecordZoneChangeBatch(
            recordsToSave: next.saves.map(Record.init), recordIDsToDelete: next.deletes)
    }

    /// Tells `scope`'s engine whether the outbox still holds record changes for it (after a send, some may
    /// be left: failures kept for the next, edits made meanwhile). Read and told in the store's writer's
    /// turn, so that a commit queueing a change cannot fall between the two.
    private func notePendingRecords(_ scope: DatabaseScope) throws {
        let engine = scope == .private ? engine : sharedEngine
        try write(durable: false) { transaction in
            let pending = try transaction.hasPendingRecords(in: scope)
            if engine.state.hasPendingUntrackedChanges != pending { engine.state.hasPendingUntrackedChanges = pending }
        }
    }

    /// The sealed versions of the last known server records this device keeps of `recordIDs` (by name: the
    /// store files server records by name).
    public func lastKnownSealedVersions(of recordIDs: [SyncCore.RecordValue.ID], syncEngine: SyncEngine) async
        -> [SyncCore.RecordValue.ID: UInt64]
    {
        // Unreadable, nothing is known: the records are checked as if this device had seen none of them.
        guard let versions = try? store.sealedVersions(of: recordIDs.map(\.recordName)) else { return [:] }
        var seen: [SyncCore.RecordValue.ID: UInt64] = [:]
        for recordID in recordIDs {
            if let version = versions[recordID.recordName] { seen[recordID] = version }
        }
        return seen
    }
}
