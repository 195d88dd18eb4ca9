import ContactsModel
import Foundation
import SyncCore
import SyncKit

/// Records the sync library refused as tampered: kept for inspection, never merged, never sent, and the
/// device's own copy left as it was. Which versions this device has seen, so that an older one is refused.
extension ContactsDevice {
    /// The record types this app always seals, every field of them: a contact (its whole content and the
    /// device that saved it), a book's name, a conflict log entry. A plain value in one is a forgery.
    public static let sealedRecordTypes = SealedRecordTypes([
        Contact.recordType: .all, AddressBook.recordType: .all, ContactConflict.recordType: .all,
    ])

    /// Keeps each refused record (``TamperedRecord``) and says so; nothing else changes.
    func applyRefused(_ refused: [SyncEngine.Event.FetchedRecordZoneChanges.FailedRecordFetch]) throws {
        guard !refused.isEmpty else { return }
        let now = options.clock()
        // Durable, unlike the sync's bookkeeping: a report of a forgery is worth a commit of its own.
        try write { transaction in
            for failure in refused {
                try ContactStore.putTampered(
                    TamperedRecord(record: failure.record, error: failure.error, date: now), transaction.db)
            }
        }
        // One line for a page, however many a hostile server sent: the store keeps each.
        let first = refused[0].error.message
        announce(
            .failure(
                refused.count == 1 ? first : "\(refused.count) records refused as tampered; the first: \(first)",
                date: now))
        announce(.contactsChanged)
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
