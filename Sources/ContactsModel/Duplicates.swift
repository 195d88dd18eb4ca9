import Foundation

/// Contacts that are likely one person, as every imported address book has them: the same email, the same
/// phone number (its last nine digits, so that `+44 20 7946 0000` and `020 7946 0000` are one), the same
/// name (case, accents, punctuation and word order aside: "Lovelace, Ada" is "Ada Lovelace"), or names one
/// typo apart. Only contacts of one book are compared: the same person in two books is usually meant.
package enum DuplicateFinder {
    /// The groups of likely duplicates among `contacts` (in list order), each with why they look alike and
    /// the book of its first contact; only contacts of one book are compared.
    package static func groups<Book: Hashable>(
        _ contacts: [(contact: Contact, book: Book)]
    ) -> [(contacts: [Contact], reasons: [String], book: Book)] {
        var bookNumbers: [Book: Int] = [:]
        var parent = Array(contacts.indices)
        func root(_ index: Int) -> Int {
            var index = index
            while parent[index] != index {
                parent[index] = parent[parent[index]]
                index = parent[index]
            }
            return index
        }
        var reasons: [Int: [String]] = [:]
        func join(_ a: Int, _ b: Int, _ reason: String) {
            let (ra, rb) = (root(a), root(b))
            let merged = (reasons[ra] ?? []) + (ra == rb ? [] : reasons[rb] ?? [])
            reasons[ra] = nil
            reasons[rb] = nil
            let top = min(ra, rb)
            parent[max(ra, rb)] = top
            reasons[top] = merged.contains(reason) ? merged : merged + [reason]
        }
        // Exact keys: the first contact with a key is joined by every later one with it.
        var firstWithKey: [String: Int] = [:]
        var nameKeys: [(key: String, index: Int)] = []
        for (index, (contact, book)) in contacts.enumerated() {
            // Keys are scoped by book, numbered in order of first appearance.
            let number = bookNumbers[book] ?? bookNumbers.count
            bookNumbers[book] = number
            let scope = "\(number)\u{1F}"
            var keys: [(String, String)] = contact.emails.map {
                ("e" + $0.value.lowercased(), "same email \($0.value)")
            }
            for phone in contact.phones where Contact.phoneKey(phone.value).count >= 7 {
                keys.append(("t" + Contact.phoneKey(phone.value), "same phone \(phone.value)"))
            }
            let name = nameKey(contact.name)
            if !name.isEmpty {
                keys.append(("n" + name, "same name"))
                nameKeys.append((scope + name, index))
            }
            for (key, reason) in keys {
                if let first = firstWithKey[scope + key] {
                    join(first, index, reason)
                } else {
                    firstWithKey[scope + key] = index
                }
            }
        }
        // Names one typo apart sort next to each other unless the typo is in the first letter.
        nameKeys.sort { $0.key < $1.key }
        for (a, b) in zip(nameKeys, nameKeys.dropFirst()) where a.key != b.key {
            let (x, y) = (Array(a.key.unicodeScalars), Array(b.key.unicodeScalars))
            if min(x.count, y.count) >= 8, oneEditApart(x, y) { join(a.index, b.index, "similar names") }
        }
        var members: [Int: [Int]] = [:]
        for index in contacts.indices { members[root(index), default: []].append(index) }
        return members.filter { $0.value.count > 1 }.sorted { $0.key < $1.key }.map { top, indices in
            (contacts: indices.map { contacts[$0].contact }, reasons: reasons[top] ?? [], book: contacts[top].book)
        }
    }

    /// The name folded, without punctuation, its words in order: "Lovelace, Ada" and "ada lovelace" are one.
    static func nameKey(_ name: String) -> String {
        let folded = Contact.sortKey(name)
        let words = folded.split { !($0.isLetter || $0.isNumber) }
        return words.sorted().joined(separator: " ")
    }

    /// Whether one character inserted, removed or replaced turns `a` into `b`.
    static func oneEditApart(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Bool {
        let (short, long) = a.count <= b.count ? (a, b) : (b, a)
        guard long.count - short.count <= 1 else { return false }
        var (i, j, edits) = (0, 0, 0)
        while i < short.count && j < long.count {
            if short[i] == long[j] {
                i += 1
                j += 1
                continue
            }
            edits += 1
            if edits > 1 { return false }
            if short.count == long.count { i += 1 }
            j += 1
        }
        return edits + (long.count - j) - (short.count - i) <= 1
    }
}
