import Foundation
import GRDB
import SyncCore
import SyncKit
import Synchronization

/// Changes fetched from the server, merged into the store.
extension ContactsDevice {
    func applyFetched(_ changes: SyncEngine.Event.FetchedRecordZoneChanges) throws {
        fetchedCount.withLock { $0 += changes.modifications.count + changes.deletions.count }
        try write { transaction in
            for modification in changes.modifications {
                try Self.merge(serverRecord: modification.record.value, transaction)
            }
            for deletion in changes.deletions {
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
        }
        if !changes.modifications.isEmpty || !changes.deletions.isEmpty { announce(.contactsChanged) }
    }

    /// Merges a server record into the local contact: the merge is queued to be saved when it differs
    /// from the server's, and a pending change the server already reflects is settled.
    static func merge(serverRecord: SyncCore.RecordValue, _ transaction: ContactStore.Transaction) throws {
        let db = transaction.db
        let recordID = serverRecord.recordID
        // The last known server record's change tag; nil when there is no last known server record.
        let knownTag = try ContactStore.serverChangeTag(recordID.recordName, db)
        if let tag = serverRecord.recordChangeTag, knownTag == .some(tag), !Contact.hasPlainFields(serverRecord) {
            // This device holds this version already (it saved it, or fetched it before): nothing to merge.
            return
        }
        guard let remote = try? Contact(record: serverRecord) else { return }
        let id = remote.id
        let pending = try transaction.pendingKind(of: recordID)
        // Read only when needed: a contact new to this device (a first download) has none. (The store
        // files it under the canonical UUID; a record named otherwise is looked up that way.)
        func known() throws -> SyncCore.RecordValue? {
            knownTag == nil && recordID.recordName == id.uuidString ? nil : try ContactStore.serverRecord(id, db)
        }
        guard let local = try ContactStore.contact(id, db) else {
            if pending == .delete {
                // Deleted here. The same version coming back keeps it deleted; a newer edit
                // made elsewhere wins over the delete (an edit is never lost silently).
                if try known()?.recordChangeTag == serverRecord.recordChangeTag { return }
                try transaction.settle(.record(.deleteRecord(recordID)))
            }
            try ContactStore.put(remote, db)
            try ContactStore.putServerRecord(serverRecord, for: id, db)
            // Written by a version before encryption: saved again, encrypted.
            if Contact.hasPlainFields(serverRecord) { try transaction.enqueue(.record(.saveRecord(recordID))) }
            return
        }
        let base = try known().flatMap { try? Contact(record: $0) }
        let merged = ContactMerge.merge(base: base, local: local, remote: remote)
        try ContactStore.put(merged, db)
        try ContactStore.putServerRecord(serverRecord, for: id, db)
        if merged == remote && !Contact.hasPlainFields(serverRecord) {
            if pending == .save { try transaction.settle(.record(.saveRecord(recordID))) }
        } else {
            try transaction.enqueue(.record(.saveRecord(recordID)))
        }
    }
}
