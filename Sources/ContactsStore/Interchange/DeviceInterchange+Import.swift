import ContactsModel
import Foundation
import GRDB
import SyncCore
import VCard

/// What an import would do, contact by contact, for a dry run.
public struct ImportPreview: Sendable {
    /// The names of the contacts it would add, and of those it would update.
    public var added: [String] = []
    public var updated: [String] = []
    public var problems: [VCardProblem] = []
}

/// Imports of contacts read whole (CSV exports), and dry runs of any import.
extension DeviceInterchange {
    /// The contacts of a CSV export (``CSVContacts``); a row whose first email is a known contact's
    /// takes that contact's ID, so that importing the same export again updates rather than duplicates.
    public func csvContacts(utf8 bytes: [UInt8]) throws -> (contacts: [Contact], problems: [VCardProblem]) {
        let (rows, problems) = CSVContacts.read(utf8: bytes)
        let known = try knownEmails()
        let contacts = rows.map { row in
            var contact = row.contact
            if let email = contact.emails.first?.value.lowercased(), let id = known[email] { contact.id = id }
            return contact
        }
        return (contacts, problems)
    }

    /// The valid cards of a vCard file, read whole (for a dry run; an import streams them).
    public func vCardContacts(utf8 bytes: [UInt8]) -> (contacts: [Contact], problems: [VCardProblem]) {
        var cards = VCardParser.Cards(utf8: bytes)
        var contacts: [Contact] = []
        var problems: [VCardProblem] = []
        while let (card, line) = cards.next() {
            switch Self.importable(card, line: line) {
            case .success(let contact): contacts.append(contact)
            case .failure(let problem): problems.append(problem)
            }
        }
        return (contacts, (problems + cards.problems).sorted { $0.line < $1.line })
    }

    /// Saves `contacts` as an import does (10,000 per transaction): a known ID updates its contact in its book.
    public func importContacts(_ contacts: [Contact], into book: RecordZone.ID? = nil) throws -> ImportReport {
        try importing(into: book) { book in
            var report = ImportReport()
            for start in stride(from: 0, to: contacts.count, by: Self.importBatch) {
                let end = min(start + Self.importBatch, contacts.count)
                let counts = try saveImported(Array(contacts[start..<end]), into: book)
                report.imported += counts.added
                report.updated += counts.updated
            }
            return report
        }
    }

    /// What importing `contacts` would do, changing nothing.
    public func preview(_ contacts: [Contact], problems: [VCardProblem]) throws -> ImportPreview {
        var preview = ImportPreview(problems: problems)
        try store.queue.read { db in
            for contact in contacts {
                if try ContactStore.book(of: contact.id, db) != nil {
                    preview.updated.append(contact.name)
                } else {
                    preview.added.append(contact.name)
                }
            }
        }
        return preview
    }

    /// Every known email (lower-cased), with the first contact, in list order, that has it.
    private func knownEmails() throws -> [String: UUID] {
        var known: [String: UUID] = [:]
        try store.forEachContact { contact in
            for email in contact.emails where known[email.value.lowercased()] == nil {
                known[email.value.lowercased()] = contact.id
            }
            return true
        }
        return known
    }
}
