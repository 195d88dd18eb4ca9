import Foundation
import GRDB

/// Finding contacts by what a person types, as a mail client's address query does: every word must
/// appear in the name, an email, the organisation, or (three digits or more) a phone number's digits;
/// letter case and accents are ignored, so "lukasz" finds "Łukasz".
public struct ContactSearch: Sendable {
    private let words: [String]

    /// A search for `query`; nil when it holds no word.
    public init?(_ query: String) {
        words = query.split(whereSeparator: \.isWhitespace).map { ContactStore.sortKey(String($0)) }
        if words.isEmpty { return nil }
    }

    public func matches(_ contact: Contact) -> Bool {
        let texts =
            [contact.name, contact.organization].map(ContactStore.sortKey)
            + contact.emails.map { ContactStore.sortKey($0.value) }
        let phoneDigits = contact.phones.map { $0.value.filter(\.isASCIIDigit) }
        return words.allSatisfy { word in
            if texts.contains(where: { $0.contains(word) }) { return true }
            let digits = word.filter(\.isASCIIDigit)
            return digits.count >= 3 && digits.count == word.count && phoneDigits.contains { $0.contains(digits) }
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension ContactStore {
    /// Hands `body` every contact, in list order, read one at a time (a large store is never held whole),
    /// until it returns false.
    func forEachContact(_ body: (Contact) throws -> Bool) throws {
        try queue.read { db in
            let rows = try Data.fetchCursor(db, sql: "SELECT json FROM contact ORDER BY sortKey, id")
            while let data = try rows.next() {
                guard try body(try ContactFormat.decode(data)) else { return }
            }
        }
    }

    /// The contacts `search` matches, in list order.
    public func contacts(matching search: ContactSearch) throws -> [Contact] {
        var found: [Contact] = []
        try forEachContact { contact in
            if search.matches(contact) { found.append(contact) }
            return true
        }
        return found
    }

    /// The first contact, in list order, with `address` among its emails (letter case aside).
    public func contact(withEmail address: String) throws -> Contact? {
        let wanted = address.lowercased()
        var found: Contact?
        try forEachContact { contact in
            if contact.emails.contains(where: { $0.value.lowercased() == wanted }) { found = contact }
            return found == nil
        }
        return found
    }
}
