import Foundation
import SyncCore
import SyncKit
import Synchronization

/// One device of the soak: contacts in memory, synced by its own engine, edited at random by the soak.
///
/// It resolves what concurrent edits cause as a CloudKit app does: a conflict takes the server's record
/// with this device's edit on top and sends it again; an edit of a contact deleted elsewhere gives way
/// to the deletion; an edit not yet confirmed survives a fetch of an older version.
final class SoakDevice: SyncEngineDelegate {
    static let zone = RecordZone.ID(zoneName: "Contacts")
    static let batchSize = 400

    let number: Int
    let account: Int
    private let pushLog: SoakPushLog
    private let errors: SoakErrors

    private struct Storage {
        var records: [Record.ID: Record] = [:]
        /// Notes edited here and not yet confirmed by the server.
        var unsent: [Record.ID: String] = [:]
        /// Contacts deleted here whose deletion the server has not confirmed.
        var deleting: Set<Record.ID> = []
        /// The write (``SoakPushLog``) of the batch each change on its way went in.
        var writes: [Record.ID: Int] = [:]
        var fetches = 0
        var created = 0
    }

    private let storage = Mutex(Storage())

    init(number: Int, account: Int, pushLog: SoakPushLog, errors: SoakErrors) {
        self.number = number
        self.account = account
        self.pushLog = pushLog
        self.errors = errors
    }

    // MARK: Edits (the soak's driver)

    /// Contacts this device holds and may edit or delete, in order.
    var editableIDs: [Record.ID] {
        storage.withLock { storage in storage.records.keys.filter { !storage.deleting.contains($0) }.sorted() }
    }

    /// Adds a new contact; returns its ID.
    func create(note: String) -> Record.ID {
        storage.withLock { storage in
            storage.created += 1
            let id = Record.ID(recordName: "soak-\(number)-\(storage.created)", zoneID: Self.zone)
            let record = Record(recordType: "Contact", recordID: id)
            record["name"] = "Device \(number) contact \(storage.created)"
            record["email"] = "d\(number).c\(storage.created)@example.com"
            record["phone"] = "+44 20 7946 \(String(format: "%04d", (number * 37 + storage.created) % 10_000))"
            record["note"] = note
            storage.records[id] = record
            storage.unsent[id] = note
            return id
        }
    }

    /// Changes a contact's note; false if the contact went meanwhile.
    func edit(_ id: Record.ID, note: String) -> Bool {
        storage.withLock { storage in
            guard let record = storage.records[id], !storage.deleting.contains(id) else { return false }
            record["note"] = note
            storage.unsent[id] = note
            return true
        }
    }

    /// Deletes a contact; false if it went meanwhile.
    func delete(_ id: Record.ID) -> Bool {
        storage.withLock { storage in
            guard storage.records.removeValue(forKey: id) != nil else { return false }
            storage.unsent[id] = nil
            storage.deleting.insert(id)
            return true
        }
    }

    // MARK: State, for the soak's checks

    var fetches: Int { storage.withLock { $0.fetches } }

    /// Nothing edited here is waiting for the server.
    var isSettled: Bool { storage.withLock { $0.unsent.isEmpty && $0.deleting.isEmpty } }

    /// Every contact's note, by ID.
    var notes: [Record.ID: String] {
        storage.withLock { storage in storage.records.mapValues { ($0["note"] as? String) ?? "" } }
    }

    // MARK: SyncEngineDelegate

    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
        switch event {
        case .accountChange(let change):
            if case .signIn = change.changeType {
                syncEngine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: Self.zone))])
            }
        case .fetchedRecordZoneChanges(let changes):
            fetched(changes, syncEngine: syncEngine)
        case .sentRecordZoneChanges(let sent):
            self.sent(sent, syncEngine: syncEngine)
        case .sentDatabaseChanges(let sent):
            for failure in sent.failedZoneSaves { errors.add(.failedSave, "zone: \(failure.error)") }
        case .didSendChanges:
            // A batch without an answer (the request failed on its way): its write changed nothing
            // this device knows of.
            let open = storage.withLock { storage in
                defer { storage.writes.removeAll() }
                return Set(storage.writes.values)
            }
            for write in open { pushLog.answered(account: account, write: write, changed: false) }
        case .didFetchRecordZoneChanges(let done):
            if let error = done.error { errors.add(.failedFetch, "device \(number): \(error)") }
        case .didFetchChanges:
            storage.withLock { $0.fetches += 1 }
        default:
            break
        }
    }

    private func fetched(_ changes: SyncEngine.Event.FetchedRecordZoneChanges, syncEngine: SyncEngine) {
        for failure in changes.failedRecordFetches {
            errors.add(.failedFetch, "device \(number), \(failure.recordID.recordName): \(failure.error)")
        }
        let gone = storage.withLock { storage in
            for modification in changes.modifications {
                let id = modification.record.recordID
                if storage.deleting.contains(id) { continue }
                storage.records[id] = Self.record(modification.record, note: storage.unsent[id])
            }
            var gone: [SyncEngine.PendingRecordZoneChange] = []
            for deletion in changes.deletions {
                storage.records[deletion.recordID] = nil
                storage.deleting.remove(deletion.recordID)
                if storage.unsent.removeValue(forKey: deletion.recordID) != nil {
                    gone.append(.saveRecord(deletion.recordID))
                }
            }
            return gone
        }
        if !gone.isEmpty { syncEngine.state.remove(pendingRecordZoneChanges: gone) }
    }

    private func sent(_ sent: SyncEngine.Event.SentRecordZoneChanges, syncEngine: SyncEngine) {
        var again: [SyncEngine.PendingRecordZoneChange] = []
        var gone: [SyncEngine.PendingRecordZoneChange] = []
        let writes = storage.withLock { storage in
            let answered =
                sent.savedRecords.map(\.recordID) + sent.failedRecordSaves.map(\.record.recordID)
                + sent.deletedRecordIDs + Array(sent.failedRecordDeletes.keys)
            let writes = Set(answered.compactMap { storage.writes.removeValue(forKey: $0) })
            for record in sent.savedRecords {
                let id = record.recordID
                if storage.deleting.contains(id) { continue }
                let note = record["note"] as? String
                if storage.unsent[id] == note { storage.unsent[id] = nil }
                storage.records[id] = Self.record(record, note: storage.unsent[id])
            }
            for failure in sent.failedRecordSaves {
                let id = failure.record.recordID
                switch failure.error.code {
                case .serverRecordChanged:
                    errors.addConflict()
                    guard !storage.deleting.contains(id), let server = failure.error.serverRecordValue else { continue }
                    // The server's record with this device's edit on top, sent again.
                    let note = storage.unsent[id] ?? (failure.record["note"] as? String) ?? ""
                    storage.records[id] = Self.record(Record(server), note: note)
                    storage.unsent[id] = note
                    again.append(.saveRecord(id))
                case .unknownItem:
                    // Deleted elsewhere while edited here: the deletion wins.
                    errors.addConflict()
                    storage.records[id] = nil
                    storage.unsent[id] = nil
                    gone.append(.saveRecord(id))
                default:
                    // Transient failures stay pending and the engine tries again; they count all the same.
                    errors.add(.failedSave, "device \(number), \(id.recordName): \(failure.error)")
                }
            }
            for id in sent.deletedRecordIDs {
                storage.deleting.remove(id)
                storage.records[id] = nil
            }
            for (id, error) in sent.failedRecordDeletes {
                if error.code == .unknownItem {
                    // Deleted on two devices at once.
                    storage.deleting.remove(id)
                    storage.records[id] = nil
                } else {
                    errors.add(.failedDelete, "device \(number), \(id.recordName): \(error)")
                }
            }
            return writes
        }
        let changed = !sent.savedRecords.isEmpty || !sent.deletedRecordIDs.isEmpty
        for write in writes { pushLog.answered(account: account, write: write, changed: changed) }
        if !gone.isEmpty { syncEngine.state.remove(pendingRecordZoneChanges: gone) }
        if !again.isEmpty { syncEngine.state.add(pendingRecordZoneChanges: again) }
    }

    func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.RecordZoneChangeBatch?
    {
        let pending = syncEngine.state.pendingRecordZoneChanges(
            first: Self.batchSize, where: context.options.scope.contains)
        var saves: [Record] = []
        var deletes: [Record.ID] = []
        var gone: [SyncEngine.PendingRecordZoneChange] = []
        storage.withLock { storage in
            for change in pending {
                switch change {
                case .saveRecord(let id):
                    // A copy, so that an edit made while the request is on its way does not change it.
                    if let record = storage.records[id], !storage.deleting.contains(id) {
                        saves.append(Record(record.value))
                    } else {
                        gone.append(change)
                    }
                case .deleteRecord(let id):
                    deletes.append(id)
                }
            }
        }
        if !gone.isEmpty { syncEngine.state.remove(pendingRecordZoneChanges: gone) }
        guard !saves.isEmpty || !deletes.isEmpty else { return nil }
        let write = pushLog.writeSent(account: account)
        storage.withLock { storage in
            for id in saves.map(\.recordID) + deletes { storage.writes[id] = write }
        }
        return SyncEngine.RecordZoneChangeBatch(recordsToSave: saves, recordIDsToDelete: deletes)
    }

    /// `record`, or a copy of it with `note` when there is an edit of this device's on top.
    private static func record(_ record: Record, note: String?) -> Record {
        guard let note, (record["note"] as? String) != note else { return record }
        let copy = Record(record.value)
        copy["note"] = note
        return copy
    }
}
