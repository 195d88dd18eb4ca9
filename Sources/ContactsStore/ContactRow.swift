import ContactsModel
import Foundation

/// A contact as its row in the store keeps it, made apart from the write that stores it
/// (``ContactStore/put(_:in:_:)``): a page of fetched contacts is made into rows on every core before the
/// merge's transaction.
struct ContactRow: Sendable {
    let id: UUID
    let sortKey: String
    /// ``ContactFormat``, compacted.
    let json: Data
    /// ``Contact/searchTextAfterName``.
    let searchText: String
    let hasPhoto: Bool

    /// `storedForm`, when given, is the contact in ``ContactFormat`` already (as a record brought it): kept
    /// as it is, compacted, not written again.
    init(_ contact: Contact, storedForm: Data? = nil) {
        id = contact.id
        sortKey = Contact.sortKey(contact.name)
        json = storedForm.map { ContactFormat.stored(wire: $0) } ?? ContactFormat.stored(contact)
        searchText = contact.searchTextAfterName
        hasPhoto = contact.photo != nil
    }
}
