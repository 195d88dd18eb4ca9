import ContactsModel
import Foundation
import GRDB
import SyncCore

/// Contacts of one book that are likely one person (``DuplicateFinder`` says which and why).
public struct DuplicateGroup: Sendable, Hashable {
    /// The contacts, in list order.
    public var contacts: [Contact]
    /// Why they look alike, such as "same email ada@example.org".
    public var reasons: [String]
    /// The book they are in.
    public var book: RecordZone.ID

    public init(contacts: [Contact], reasons: [String], book: RecordZone.ID) {
        self.contacts = contacts
        self.reasons = reasons
        self.book = book
    }
}

extension ContactStore {
    /// The groups of likely duplicates, in list order of their first contact. Reads every contact.
    package func duplicates() throws -> [DuplicateGroup] {
        var contacts: [(contact: Contact, book: RecordZone.ID)] = []
        try queue.read { db in
            let zones = try Self.bookZones(db)
            let rows = try Row.fetchCursor(db, sql: "SELECT json, book FROM contact ORDER BY sortKey, id")
            while let row = try rows.next() {
                guard let zoneID = zones[row["book"]] else { continue }
                contacts.append((try ContactFormat.decode(row["json"]), zoneID))
            }
        }
        return DuplicateFinder.groups(contacts).map {
            DuplicateGroup(contacts: $0.contacts, reasons: $0.reasons, book: $0.book)
        }
    }
}
