import Foundation
import GRDB
import SyncCore
import SyncKit

extension ContactStore {
    /// The next request's worth of changes to send, read in one transaction.
    struct Batch: Sendable {
        /// The records to save, each built on its last known server record.
        var saves: [SyncCore.RecordValue] = []
        var deletes: [SyncCore.RecordValue.ID] = []
        /// The outbox version of each change in the batch, by outbox key, to settle it by afterwards.
        var versions: [String: Int64] = [:]
        /// Changes the engine still holds that the outbox does not: settled before a crash.
        var stale: [SyncEngine.PendingRecordZoneChange] = []
    }

    /// Walks `pending` in order and takes up to `maximumCount` changes that the outbox still holds, so that
    /// building a batch costs what the batch holds, not what the outbox holds.
    /// Contact records say which device saved them (`device`), for the other devices' conflict logs.
    func nextBatch(
        of pending: [SyncEngine.PendingRecordZoneChange], device: String,
        maximumCount: Int = SyncEngine.RecordZoneChangeBatch.defaultMaximumCount
    ) throws -> Batch {
        try queue.read { db in
            var batch = Batch()
            let outbox = try db.cachedStatement(sql: "SELECT kind, version FROM outbox WHERE key = ?")
            for change in pending {
                if batch.saves.count + batch.deletes.count >= maximumCount { break }
                let entry = OutboxEntry(change: .record(change))
                let key = entry.key
                guard let row = try Row.fetchOne(outbox, arguments: [key]), row["kind"] == entry.kind.rawValue else {
                    batch.stale.append(change)
                    continue
                }
                switch change {
                case .saveRecord(let recordID) where AddressBook.isBookRecord(recordID):
                    guard let book = try Self.book(recordID.zoneID, db) else {
                        batch.stale.append(change)
                        continue
                    }
                    batch.saves.append(book.record(base: try Self.serverRecord(named: recordID.recordName, db)))
                case .saveRecord(let recordID) where ContactConflict.isConflictRecord(recordID):
                    guard let id = ContactConflict.id(of: recordID), let entry = try Self.conflict(id, db) else {
                        batch.stale.append(change)
                        continue
                    }
                    batch.saves.append(entry.record)
                case .saveRecord(let recordID):
                    guard let id = UUID(canonical: recordID.recordName), let stored = try Self.storedContact(id, db)
                    else {
                        batch.stale.append(change)
                        continue
                    }
                    var record = try Contact.record(
                        stored: stored, id: id, base: try Self.serverRecord(id, db), in: recordID.zoneID)
                    record[encrypted: Contact.deviceField] = .string(device)
                    batch.saves.append(record)
                case .deleteRecord(let recordID):
                    batch.deletes.append(recordID)
                }
                batch.versions[key] = row["version"]
            }
            return batch
        }
    }
}
