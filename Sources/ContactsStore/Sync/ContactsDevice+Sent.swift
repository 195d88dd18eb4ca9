import ContactsModel
import Foundation
import GRDB
import SyncCore
import SyncKit
import Synchronization

/// What the server said of a send, written to the store: saved records become the last known server
/// records and settle the versions that were sent; failures are fixed and queued again.
extension ContactsDevice {
    func applySent(_ sent: SyncEngine.Event.SentRecordZoneChanges, scope: DatabaseScope) throws {
        let now = options.clock()
        // A confirmation settles the outbox versions that were in the batch; an edit made since stays queued.
        let answered =
            sent.savedRecords.map { SyncEngine.PendingRecordZoneChange.saveRecord($0.recordID) }
            + sent.failedRecordSaves.map { .saveRecord($0.record.recordID) }
            + (sent.deletedRecordIDs + Array(sent.failedRecordDeletes.keys)).map { .deleteRecord($0) }
        let versions = sends.withLock { sends in
            var versions: [String: Int64] = [:]
            for change in answered {
                let key = OutboxEntry(change: .record(change)).key
                versions[key] = sends[scope]?.inFlight.removeValue(forKey: key)
            }
            return versions
        }
        @Sendable func version(_ change: SyncEngine.PendingRecordZoneChange) -> Int64 {
            versions[OutboxEntry(change: .record(change)).key] ?? 0
        }
        let changed = try write(durable: false) { transaction in
            let db = transaction.db
            var changed = false
            // The server dated the records it saved just now: how far this device's clock is from it.
            if let serverDate = sent.savedRecords.compactMap(\.value.modificationDate).max() {
                try EditClock.learnOffset(serverDate: serverDate, now: now, db)
            }
            for record in sent.savedRecords {
                try Self.putServerRecord(record.value, for: record.recordID, db)
                let change = SyncEngine.PendingRecordZoneChange.saveRecord(record.recordID)
                try transaction.settle(.record(change), version: version(change))
            }
            for recordID in sent.deletedRecordIDs {
                try Self.putServerRecord(nil, for: recordID, db)
                let change = SyncEngine.PendingRecordZoneChange.deleteRecord(recordID)
                try transaction.settle(.record(change), version: version(change))
            }
            for failure in sent.failedRecordSaves {
                let recordID = failure.record.recordID
                let isBook = AddressBook.isBookRecord(recordID)
                switch failure.error.code {
                case .serverRecordChanged where VerifiedKeyRecord.isRecord(recordID):
                    // Another device verified the same person: the newer verification is kept, and sent when
                    // it is this device's.
                    if let serverRecord = failure.error.serverRecordValue {
                        try ContactStore.mergeVerification(serverRecord, db)
                        if try ContactStore.knownKey(VerifiedKeyRecord.userRecordName(of: recordID), db)?.verifiedAt
                            != VerifiedKeyRecord.knownKey(in: serverRecord)?.verifiedAt
                        {
                            try transaction.enqueue(.record(.saveRecord(recordID)))
                        } else {
                            try transaction.settle(.record(.saveRecord(recordID)))
                        }
                    }
                case .serverRecordChanged where isBook && failure.error.serverRecordValue != nil:
                    // Renamed on two devices at once: this device's name, sent over the server's. (Without the
                    // server's record, refused as tampered, nothing is sent again: the next fetch says more.)
                    try Self.putServerRecord(failure.error.serverRecordValue, for: recordID, db)
                    try transaction.enqueue(.record(.saveRecord(recordID)))
                case .serverRecordChanged:
                    if let serverRecord = failure.error.serverRecordValue {
                        if let fetched = FetchedContact(serverRecord),
                            let edited = try Self.mergeServerRecord(fetched, device: name, now: now, transaction)
                        {
                            try EditClock.observe(edited, now: now, db)
                        }
                        changed = true
                    }
                case .zoneNotFound where recordID.zoneID.ownerName != RecordZone.ID.defaultOwnerName:
                    // A book shared no longer: it leaves this device, as the next fetch would say.
                    try transaction.removeBook(recordID.zoneID)
                    changed = true
                case .zoneNotFound:
                    try Self.putServerRecord(nil, for: recordID, db)
                    try transaction.enqueue(.zone(.saveZone(RecordZone(zoneID: recordID.zoneID))))
                    try transaction.enqueue(.record(.saveRecord(recordID)))
                case .unknownItem:
                    try Self.putServerRecord(nil, for: recordID, db)
                    try transaction.enqueue(.record(.saveRecord(recordID)))
                case .permissionFailure:
                    try Self.refused(.saveRecord(recordID), failure.error, transaction)
                default:
                    // Kept in the outbox: the next launch tries again; the status shows why.
                    try ContactStore.setSetting(.lastError, "\(failure.error)", db)
                }
            }
            for (recordID, error) in sent.failedRecordDeletes {
                switch error.code {
                case .unknownItem, .zoneNotFound: try transaction.settle(.record(.deleteRecord(recordID)))
                case .permissionFailure: try Self.refused(.deleteRecord(recordID), error, transaction)
                default: break
                }
            }
            return changed
        }
        if changed { announce(.contactsChanged) }
    }

    /// Keeps (or forgets) the last known server record of a contact or a book's name.
    private static func putServerRecord(
        _ record: SyncCore.RecordValue?, for recordID: SyncCore.RecordValue.ID, _ db: GRDB.Database
    ) throws {
        if let id = UUID(canonical: recordID.recordName) {
            try ContactStore.putServerRecord(record, for: id, db)
        } else if AddressBook.isBookRecord(recordID) || VerifiedKeyRecord.isRecord(recordID) {
            try ContactStore.putServerRecord(record, named: recordID.recordName, db)
        }
    }

    /// The owner made the book read-only since `change` was queued: the server refused it. It is refused
    /// here as a change found before sending is (``refuseUnsendable(_:in:device:now:_:)``), and the status
    /// says why.
    private static func refused(
        _ change: SyncEngine.PendingRecordZoneChange, _ error: SyncError, _ transaction: ContactStore.Transaction
    ) throws {
        if var book = try ContactStore.book(change.recordID.zoneID, transaction.db), !book.isOwn {
            book.access = .readOnly
            try ContactStore.putBook(book, transaction.db)
        }
        try refuseUnsendable(change, device: nil, now: Date(), transaction)
        try ContactStore.setSetting(.lastError, "\(error)", transaction.db)
    }
}
