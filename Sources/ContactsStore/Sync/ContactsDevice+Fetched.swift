import ContactsModel
import Foundation
import GRDB
import SyncCore
import SyncKit
import Synchronization

/// Changes fetched from the server, merged into the store.
extension ContactsDevice {
    func applyFetched(_ changes: SyncEngine.Event.FetchedRecordZoneChanges) async throws {
        fetchedCount.withLock { $0 += changes.modifications.count + changes.deletions.count }
        try contacts.applyRefused(changes.failedRecordFetches)
        let userRecordName = try store.setting(.userRecordName)
        let now = options.clock()
        let serverDate = changes.modifications.compactMap(\.record.value.modificationDate).max()
        let fetched = try await FetchedContact.read(changes.modifications.map(\.record.value))
        let problems = try write(durable: false) { transaction in
            if let serverDate { try EditClock.learnLowerBound(serverDate: serverDate, now: now, transaction.db) }
            var latestEdit = Date.distantPast
            // Each is merged as new once: a record twice in the changes finds the first one stored.
            var unknown = try ContactStore.unknownContacts(fetched.compactMap { $0?.record.recordID }, transaction.db)
            for (modification, fetched) in zip(changes.modifications, fetched) {
                let record = modification.record.value
                switch record.recordType {
                case Contact.recordType:
                    // (A record this version cannot read as a contact is left as it is.)
                    if let fetched,
                        let edited = try Self.mergeServerRecord(
                            fetched, device: name, now: now,
                            unknown: unknown.remove(record.recordID.recordName) != nil, transaction)
                    {
                        latestEdit = max(latestEdit, edited)
                    }
                case AddressBook.recordType: try Self.mergeBook(serverRecord: record, transaction)
                case ContactConflict.recordType:
                    if let entry = ContactConflict(record: record) {
                        try ContactStore.putConflict(entry, transaction.db)
                    }
                case Share.recordType:
                    try Self.applyShare(record, zoneID: record.recordID.zoneID, me: userRecordName, transaction)
                case VerifiedKeyRecord.recordType:
                    try ContactStore.mergeVerification(record, transaction.db)
                default: continue
                }
            }
            for deletion in changes.deletions {
                if deletion.recordType == Share.recordType {
                    try Self.applyShare(nil, zoneID: deletion.recordID.zoneID, me: userRecordName, transaction)
                    continue
                }
                if let id = ContactConflict.id(of: deletion.recordID) {
                    // Restored or dismissed on another device.
                    try ContactStore.removeConflict(id, transaction.db)
                    try transaction.settle(.record(.deleteRecord(deletion.recordID)))
                    continue
                }
                guard let id = UUID(uuidString: deletion.recordID.recordName) else { continue }
                let pending = try transaction.pendingKind(of: deletion.recordID)
                try ContactStore.putServerRecord(nil, for: id, transaction.db)
                if pending == .save {
                    // Edited here, deleted elsewhere: the edit wins; it goes up as a new record.
                    continue
                }
                try ContactStore.removeContact(id, transaction.db)
                try transaction.settle(.record(.deleteRecord(deletion.recordID)))
            }
            try EditClock.observe(latestEdit, now: now, transaction.db)
            return transaction.problems
        }
        for problem in problems { announce(.failure(problem, date: Date())) }
        if !changes.modifications.isEmpty || !changes.deletions.isEmpty { announce(.contactsChanged) }
    }

    /// Zones that appeared or went: a new book (its name comes with its records), or a book gone from
    /// the server, shared no longer, or left. A zone whose encrypted data the server lost is uploaded again.
    func applyFetched(_ changes: SyncEngine.Event.FetchedDatabaseChanges) throws {
        let changed = try write(durable: false) { transaction in
            let db = transaction.db
            for modification in changes.modifications where try ContactStore.book(modification.zoneID, db) == nil {
                try ContactStore.putBook(AddressBook.unknown(modification.zoneID), db)
            }
            var changed = false
            for deletion in changes.deletions {
                guard let book = try ContactStore.book(deletion.zoneID, db) else { continue }
                if deletion.reason == .encryptedDataReset && book.isOwn {
                    // The server lost its copy, not the user: keep the contacts and upload them again.
                    try transaction.forgetServerRecords(of: book.zoneID)
                    try transaction.queueUpload(of: book)
                    continue
                }
                try transaction.removeBook(deletion.zoneID)
                changed = true
            }
            return changed || !changes.modifications.isEmpty
        }
        if changed { announce(.contactsChanged) }
    }

    /// Merges a server record into the local contact: the merge is queued to be saved when it differs
    /// from the server's, and a pending change the server already reflects is settled. A value the merge
    /// drops goes into the conflict log, the local side as `device`'s, at `now`. Returns the latest edit
    /// time of the server's contact, when it was read (for ``EditClock``). `unknown` says the caller found
    /// nothing of this contact in the store (``ContactStore/unknownContacts(_:_:)``): nothing to look for.
    @discardableResult
    static func mergeServerRecord(
        _ fetched: FetchedContact, device: String, now: Date, unknown: Bool = false,
        _ transaction: ContactStore.Transaction
    ) throws -> Date? {
        let db = transaction.db
        let (serverRecord, remote) = (fetched.record, fetched.contact)
        let recordID = serverRecord.recordID
        // The last known server record's change tag; nil when there is no last known server record.
        let knownTag = unknown ? nil : try ContactStore.serverChangeTag(recordID.recordName, db)
        // (A contact record holding a plain field never gets here: the sync library refuses it as tampered, since
        // the device declares contacts sealed; versions before encryption wrote such records, and they are not
        // adopted any more: see ``contacts.applyRefused(_:)``.)
        if let tag = serverRecord.recordChangeTag, knownTag == .some(tag) {
            // This device holds this version already (it saved it, or fetched it before): nothing to merge.
            return nil
        }
        let id = remote.id
        let pending = unknown ? nil : try transaction.pendingKind(of: recordID)
        // Read only when needed: a contact new to this device (a first download) has none. (The store
        // files it under the canonical UUID; a record named otherwise is looked up that way.)
        func known() throws -> SyncCore.RecordValue? {
            knownTag == nil && recordID.recordName == id.canonicalString ? nil : try ContactStore.serverRecord(id, db)
        }
        guard let local = unknown ? nil : try ContactStore.contact(id, db) else {
            if pending == .delete {
                // Deleted here. The same version coming back keeps it deleted; a newer edit
                // made elsewhere wins over the delete (an edit is never lost silently).
                if try known()?.recordChangeTag == serverRecord.recordChangeTag { return remote.lastModified }
                try transaction.settle(.record(.deleteRecord(recordID)))
            }
            try ContactStore.put(fetched.row, in: recordID.zoneID, db)
            // Stored as it came, the row is the record's contact: no need to read it back to compare.
            try ContactStore.putServerRecord(serverRecord, for: id, sharesContact: fetched.storedForm != nil, db)
            return remote.lastModified
        }
        if let book = try ContactStore.book(of: id, db), book != recordID.zoneID {
            // Two books hold a contact of the same ID (one vCard file imported into both): the one this
            // device had first stays, and the other is left on the server untouched.
            transaction.problems.append(
                "contact \(id.uuidString) is in two books (\(book.zoneName), \(recordID.zoneID.zoneName)); this device keeps the one it had"
            )
            return nil
        }
        let base = try known().flatMap { try? Contact(record: $0) }
        let (merged, losses) = ContactMerge.resolve(base: base, local: local, remote: remote)
        let remoteDevice = Contact.device(of: serverRecord) ?? "another device"
        for loss in losses {
            func side(_ value: (value: ContactConflict.Value, edited: Date), local: Bool) -> ContactConflict.Side {
                ContactConflict.Side(value: value.value, edited: value.edited, device: local ? device : remoteDevice)
            }
            try transaction.logConflict(
                ContactConflict(
                    contactID: id, zoneID: recordID.zoneID, contactName: merged.name, field: loss.field,
                    kept: side(loss.kept, local: !loss.lostLocally), lost: side(loss.lost, local: loss.lostLocally),
                    date: now))
        }
        try ContactStore.put(merged, in: recordID.zoneID, db)
        try ContactStore.putServerRecord(serverRecord, for: id, db)
        if merged == remote {
            if pending == .save { try transaction.settle(.record(.saveRecord(recordID))) }
        } else {
            try transaction.enqueue(.record(.saveRecord(recordID)))
        }
        return remote.lastModified
    }

    /// A book's name from its record: the newer name wins, unless this device renamed the book and has
    /// not sent it yet (its rename is sent over the server's).
    static func mergeBook(serverRecord: SyncCore.RecordValue, _ transaction: ContactStore.Transaction) throws {
        let db = transaction.db
        let zoneID = serverRecord.recordID.zoneID
        guard let name = AddressBook.name(in: serverRecord) else { return }
        var book = try ContactStore.bookOrUnknown(zoneID, db)
        try ContactStore.putServerRecord(serverRecord, named: serverRecord.recordID.recordName, db)
        if try transaction.pendingKind(of: serverRecord.recordID) == .save, book.name != name { return }
        book.name = name
        try ContactStore.putBook(book, db)
    }

    /// Who shares a book, from its share's record (nil: the share was deleted). For a book shared with
    /// this account, the record also says what this account may do.
    static func applyShare(
        _ record: SyncCore.RecordValue?, zoneID: RecordZone.ID, me: String?, _ transaction: ContactStore.Transaction
    ) throws {
        let db = transaction.db
        var book = try ContactStore.bookOrUnknown(zoneID, db)
        let participants = record.flatMap(Share.participants(in:)) ?? []
        book.participants = participants
        if !book.isOwn {
            book.ownerUsername = participants.first { $0.role == .owner }?.username ?? book.ownerUsername
            let mine = participants.first { $0.userRecordName == me && $0.acceptanceStatus == .accepted }
            book.access = mine?.permission == .readWrite ? .readWrite : .readOnly
        }
        try ContactStore.putBook(book, db)
        // Made read-only: what this device queued for the book is refused now, before it is sent.
        if record != nil, !book.isOwn, !book.canEdit {
            _ = try refuseQueued(in: zoneID, bookName: book.name, owner: book.ownerUsername, transaction)
        }
    }
}
