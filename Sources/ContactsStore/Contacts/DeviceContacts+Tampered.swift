import ContactsModel
import Foundation
import SyncCore
import SyncKit

/// Records the sync library refused as tampered: kept for inspection, never merged, never sent, and the
/// device's own copy left as it was. Which versions this device has seen, so that an older one is refused.
extension DeviceContacts {
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
}
