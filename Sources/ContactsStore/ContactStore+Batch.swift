import ContactsModel
import Foundation
import GRDB
import SyncCore
import SyncKit

extension ContactStore {
    /// The next request's worth of changes to send, read from the outbox in one transaction.
    struct Batch: Sendable {
        /// The records to save, each built on its last known server record.
        var saves: [SyncCore.RecordValue] = []
        var deletes: [SyncCore.RecordValue.ID] = []
        /// The outbox version of each change in the batch, by outbox key, to settle it by afterwards.
        var versions: [String: Int64] = [:]
        /// Where the next batch of the same send starts reading: the last outbox key read.
        var cursor: String
        /// Saves of items that are gone (a contact, book or conflict no longer stored): nothing to send.
        var orphans: [OutboxEntry] = []

        var isEmpty: Bool { saves.isEmpty && deletes.isEmpty }
    }

    /// Reads the outbox's record changes for `scope`'s database in the order of their keys (so of their
    /// records' names), from after the key `cursor`, and takes up to `maximumCount` of them that
    /// `isIncluded` accepts and that are not `inFlight` (sent in a batch not answered yet). Building a batch
    /// costs what the batch holds, not what the outbox holds. Contact records say which device saved them
    /// (`device`), for the other devices' conflict logs.
    ///
    /// In key order, not in the order the changes were queued: contacts are named by random UUIDs, and an
    /// import queues them in runs of ``ContactsDevice/importBatch`` that each cross the whole range of names.
    /// Taken in queued order, each batch of a large upload wrote one page of each index keyed by name (the
    /// server records', the outbox's, and the server's own) per record; in key order, a few pages per batch.
    func nextBatch(
        after cursor: String, in scope: DatabaseScope, device: String, maximumCount: Int,
        skipping inFlight: (String) -> Bool, where isIncluded: (SyncEngine.PendingRecordZoneChange) -> Bool
    ) throws -> Batch {
        try queue.read { db in
            var batch = Batch(cursor: cursor)
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT key, kind, version, zoneName, ownerName FROM outbox
                        WHERE key > ? AND key < 'record;' AND \(OutboxEntry.scopeCondition(scope))
                        ORDER BY key
                        """),
                arguments: [cursor])
            var changes: [(entry: OutboxEntry, change: SyncEngine.PendingRecordZoneChange)] = []
            while changes.count < maximumCount, let row = try rows.next() {
                batch.cursor = row["key"]
                guard let entry = OutboxEntry(row: row), case .record(let change) = entry.change,
                    isIncluded(change), !inFlight(entry.key)
                else { continue }
                changes.append((entry, change))
            }
            // The contacts' rows and last known server records in a statement for many, not two for each.
            let contacts = try Self.contactsToSave(
                changes.compactMap {
                    if case .saveRecord(let recordID) = $0.change { UUID(canonical: recordID.recordName) } else { nil }
                }, db)
            for (entry, change) in changes {
                switch change {
                case .saveRecord(let recordID):
                    guard
                        let record = try Self.recordToSave(
                            recordID, device: device, photos: photos, contacts: contacts, db)
                    else {
                        batch.orphans.append(entry)
                        continue
                    }
                    batch.saves.append(record)
                case .deleteRecord(let recordID):
                    batch.deletes.append(recordID)
                }
                batch.versions[entry.key] = entry.version
            }
            return batch
        }
    }

    /// A contact's row as stored and its last known server record, read for a batch.
    struct ContactToSave {
        var stored: Data
        var base: SyncCore.RecordValue?
    }

    /// The rows of the contacts `ids` that are stored, with their last known server records.
    static func contactsToSave(_ ids: [UUID], _ db: GRDB.Database) throws -> [UUID: ContactToSave] {
        var contacts: [UUID: ContactToSave] = [:]
        contacts.reserveCapacity(ids.count)
        try inChunks(ids) { chunk, marks in
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT contact.id AS id, contact.json AS stored, serverRecord.json AS json,
                        serverRecord.contact AS contact, serverRecord.sealedVersion AS sealedVersion,
                        CASE WHEN serverRecord.sharesContact THEN contact.json END AS sharedContact
                    FROM contact LEFT JOIN serverRecord ON serverRecord.id = contact.id
                    WHERE contact.id IN (\(marks))
                    """,
                arguments: StatementArguments(chunk.map(RecordKey.key)))
            while let row = try rows.next() {
                guard let id = RecordKey.id(row["id"]) else { continue }
                contacts[id] = ContactToSave(
                    stored: row["stored"], base: try serverRecord(row, name: id.canonicalString))
            }
        }
        return contacts
    }

    /// The record to send for a queued save of `recordID`: a book's name, a conflict-log entry or a
    /// contact, each built on its last known server record; nil when the item is no longer stored.
    private static func recordToSave(
        _ recordID: SyncCore.RecordValue.ID, device: String, photos: ContactPhotos, contacts: [UUID: ContactToSave],
        _ db: GRDB.Database
    ) throws -> SyncCore.RecordValue? {
        if AddressBook.isBookRecord(recordID) {
            guard let book = try book(recordID.zoneID, db) else { return nil }
            return book.record(base: try serverRecord(named: recordID.recordName, db))
        }
        if VerifiedKeyRecord.isRecord(recordID) {
            guard let key = try knownKey(VerifiedKeyRecord.userRecordName(of: recordID), db) else { return nil }
            return VerifiedKeyRecord.record(key, base: try serverRecord(named: recordID.recordName, db))
        }
        if ContactConflict.isConflictRecord(recordID) {
            guard let id = ContactConflict.id(of: recordID) else { return nil }
            return try conflict(id, db)?.record
        }
        guard let id = UUID(canonical: recordID.recordName), let contact = contacts[id] else { return nil }
        let (stored, base) = (contact.stored, contact.base)
        var record = try Contact.record(stored: stored, id: id, base: base, in: recordID.zoneID)
        record[encrypted: Contact.deviceField] = .string(device)
        Contact.setPhotoAsset(of: &record, stored: stored, base: base, photos: photos)
        return record
    }
}
