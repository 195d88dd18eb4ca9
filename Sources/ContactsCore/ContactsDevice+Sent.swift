import Foundation
import SyncCore
import SyncKit
import Synchronization

/// What the server said of a send, written to the store: saved records become the last known server
/// records and settle the versions that were sent; failures are fixed and queued again.
extension ContactsDevice {
    func applySent(_ sent: SyncEngine.Event.SentRecordZoneChanges) throws {
        // A confirmation settles the outbox versions that were in the batch; an edit made since stays queued.
        let answered =
            sent.savedRecords.map { SyncEngine.PendingRecordZoneChange.saveRecord($0.recordID) }
            + sent.failedRecordSaves.map { .saveRecord($0.record.recordID) }
            + (sent.deletedRecordIDs + Array(sent.failedRecordDeletes.keys)).map { .deleteRecord($0) }
        let versions = versionsInFlight.withLock { inFlight in
            var versions: [String: Int64] = [:]
            for change in answered {
                let key = OutboxEntry(change: .record(change)).key
                versions[key] = inFlight.removeValue(forKey: key)
            }
            return versions
        }
        @Sendable func version(_ change: SyncEngine.PendingRecordZoneChange) -> Int64 {
            versions[OutboxEntry(change: .record(change)).key] ?? 0
        }
        let changed = try write { transaction in
            let db = transaction.db
            var changed = false
            for record in sent.savedRecords {
                guard let id = UUID(uuidString: record.recordID.recordName) else { continue }
                try ContactStore.putServerRecord(record.value, for: id, db)
                let change = SyncEngine.PendingRecordZoneChange.saveRecord(record.recordID)
                try transaction.settle(.record(change), version: version(change))
            }
            for recordID in sent.deletedRecordIDs {
                if let id = UUID(uuidString: recordID.recordName) { try ContactStore.putServerRecord(nil, for: id, db) }
                let change = SyncEngine.PendingRecordZoneChange.deleteRecord(recordID)
                try transaction.settle(.record(change), version: version(change))
            }
            for failure in sent.failedRecordSaves {
                let recordID = failure.record.recordID
                guard let id = UUID(uuidString: recordID.recordName) else { continue }
                switch failure.error.code {
                case .serverRecordChanged:
                    if let serverRecord = failure.error.serverRecordValue {
                        try Self.merge(serverRecord: serverRecord, transaction)
                        changed = true
                    }
                case .zoneNotFound:
                    try ContactStore.putServerRecord(nil, for: id, db)
                    try transaction.enqueue(.zone(.saveZone(RecordZone(zoneID: recordID.zoneID))))
                    try transaction.enqueue(.record(.saveRecord(recordID)))
                case .unknownItem:
                    try ContactStore.putServerRecord(nil, for: id, db)
                    try transaction.enqueue(.record(.saveRecord(recordID)))
                default:
                    // Kept in the outbox: the next launch tries again; the status shows why.
                    try ContactStore.setSetting(.lastError, "\(failure.error)", db)
                }
            }
            for (recordID, error) in sent.failedRecordDeletes
            where error.code == .unknownItem || error.code == .zoneNotFound {
                try transaction.settle(.record(.deleteRecord(recordID)))
            }
            return changed
        }
        if changed { announce(.contactsChanged) }
    }
}
