import ContactsModel
import Foundation
import GRDB
import SyncCore
import SyncKit

/// Changes a book's owner made it read-only for: whatever this device queued for that book can no longer be
/// sent. Each is refused here, before sending, and nothing in it is lost: every value of a contact the
/// change would have written goes to this device's conflict log (which a read-only book cannot carry to
/// other devices), the contact shows the owner's version again, and the status says why.
extension ContactsDevice {
    /// Refuses every change queued for `zoneID`, now read-only for this account; the reason for the status
    /// when there were any.
    static func refuseQueued(
        in zoneID: RecordZone.ID, bookName: String, owner: String?, _ transaction: ContactStore.Transaction
    )
        throws -> String?
    {
        let queued = try ContactStore.pendingRecordChanges(in: zoneID, transaction.db)
        guard !queued.isEmpty else { return nil }
        let now = Date()
        for change in queued { try refuseUnsendable(change, device: nil, now: now, transaction) }
        let reason =
            "\(owner ?? "its owner") made \"\(bookName)\" read-only for you: \(queued.count) change(s) not sent are refused, and every value they held is in the conflict log (contacts conflicts)"
        try ContactStore.setSetting(.lastError, reason, transaction.db)
        transaction.problems.append(reason)
        return reason
    }

    /// Takes one change that cannot be sent out of the outbox: a contact's values it would have written go
    /// to the conflict log, and the contact goes back to its last server version (or away, when the server
    /// never had it). Other records (a book's name, a conflict entry) are dropped with it.
    static func refuseUnsendable(
        _ change: SyncEngine.PendingRecordZoneChange, device: String?, now: Date,
        _ transaction: ContactStore.Transaction
    ) throws {
        let db = transaction.db
        let recordID = change.recordID
        try transaction.settle(.record(change))
        guard let id = UUID(canonical: recordID.recordName) else { return }
        let serverRecord = try ContactStore.serverRecord(id, db)
        let server = serverRecord.flatMap { try? Contact(record: $0) }
        if let local = try ContactStore.contact(id, db) {
            let owner = server ?? Contact(id: id, name: "")
            for loss in ContactMerge.overwritten(local, by: owner) {
                // Kept on this device only: the book no longer takes this account's records.
                try ContactStore.putConflict(
                    ContactConflict(
                        contactID: id, zoneID: recordID.zoneID, contactName: local.name, field: loss.field,
                        kept: .init(value: loss.kept.value, edited: loss.kept.edited, device: "the book's owner"),
                        lost: .init(value: loss.lost.value, edited: loss.lost.edited, device: device ?? "this device"),
                        date: now), db)
            }
        }
        if let server, let serverRecord {
            try ContactStore.put(
                server, storedForm: Contact.storedForm(in: serverRecord), in: recordID.zoneID, db)
        } else {
            try ContactStore.removeContact(id, db)
        }
    }
}
