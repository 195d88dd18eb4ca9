import ContactsModel
import Foundation
import SyncClient
import SyncCore

/// A fetched contact record read before the merge: its contact, and the row that stores it when it is new
/// here. Reading a record is most of a first download's work outside SQLite and needs nothing of the store,
/// so a page's records are read on every core (``read(_:)``) and the merge's transaction only writes. (A class:
/// a page's worth are handed around, and a copy of a reference is one count where a copy of the values is
/// dozens.)
final class FetchedContact: Sendable {
    let record: RecordValue
    let contact: Contact
    /// The contact in ``ContactFormat`` as the record brought it, when it is in the current form.
    let storedForm: Data?
    let row: ContactRow

    /// Nil when `record` is not a contact's (or not one this version reads).
    init?(_ record: RecordValue) {
        guard let contact = try? Contact(record: record) else { return nil }
        self.record = record
        self.contact = contact
        storedForm = Contact.storedForm(in: record)
        row = ContactRow(contact, storedForm: storedForm)
    }

    /// Each of `records` read, in order: nil for one that is not a contact's. On up to as many tasks as
    /// there are cores.
    static func read(_ records: [RecordValue]) async throws -> [FetchedContact?] {
        try await ConcurrentMap.map(records) { $0.recordType == Contact.recordType ? FetchedContact($0) : nil }
    }
}
