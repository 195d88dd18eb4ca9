import Foundation

/// Finding contacts by what a person types: every word must appear somewhere in the contact (the name, an
/// email, the organisation, a group, the address, the notes, or, three digits or more, a phone number's
/// digits), or where a scope says (`email:example.org`, `org:acme`, `tel:0199`, `group:family`,
/// `book:work`, `name:`, `note:`, `address:`). Letter case and accents are ignored, so "lukasz" finds
/// "Łukasz".
///
/// The store keeps each contact's ``Contact/searchText`` beside it, so the command line and the TUI
/// search without reading whole contacts, and both match in the same way: this type.
public struct ContactSearch: Sendable, Equatable {
    /// Where a scoped word must appear.
    public enum Scope: Sendable, Equatable {
        case name, email, organization, phone, group, book, notes, address

        /// The tag of the search text's segments this scope looks through; nil for the book, which is not
        /// in the text (books are renamed without their contacts changing).
        var tag: UInt8? {
            switch self {
            case .name: Tag.name
            case .email: Tag.email
            case .organization: Tag.organization
            case .phone: Tag.phone
            case .group: Tag.group
            case .notes: Tag.notes
            case .address: Tag.address
            case .book: nil
            }
        }
    }

    /// What a person may type before the colon.
    static let scopes: [String: Scope] = [
        "name": .name, "email": .email, "mail": .email, "org": .organization, "organisation": .organization,
        "organization": .organization, "company": .organization, "tel": .phone, "phone": .phone,
        "group": .group, "book": .book, "note": .notes, "notes": .notes, "address": .address, "adr": .address,
    ]

    struct Term: Sendable, Equatable {
        var scope: Scope?
        /// The word, folded as the search text is.
        var word: [UInt8]
        /// The word's digits, for phone numbers: all of an unscoped word made of three digits or more,
        /// the digits of a word scoped to phones, nil otherwise.
        var digits: [UInt8]?
    }

    let terms: [Term]
    /// Whether a word also finds a name that has its letters in order, as an incremental search does.
    public let isFuzzy: Bool

    /// A search for `query`; nil when it asks nothing (no word, or only a scope still being typed: `email:`).
    /// A `fuzzy` search also finds names that have a word's letters in order, ranked last (``rank(bytes:from:to:bookName:)``).
    public init?(_ query: String, fuzzy: Bool = false) {
        isFuzzy = fuzzy
        terms = query.split(whereSeparator: \.isWhitespace).compactMap { raw in
            var scope: Scope?
            var text = Substring(raw)
            if let colon = raw.firstIndex(of: ":"), let named = Self.scopes[raw[..<colon].lowercased()] {
                scope = named
                text = raw[raw.index(after: colon)...]
            }
            let word = Array(Contact.folded(String(text)).utf8)
            guard !word.isEmpty else { return nil }
            let digits = word.filter { (0x30...0x39).contains($0) }
            let isNumber = digits.count >= 3 && digits.count == word.count
            return Term(scope: scope, word: word, digits: scope == .phone ? digits : (isNumber ? digits : nil))
        }
        if terms.isEmpty { return nil }
    }

    /// Whether everything this search matches is among what `previous` matched, so that it need only look
    /// through those: each word the same or longer, in the same scope, and perhaps more words.
    public func narrows(_ previous: ContactSearch) -> Bool {
        guard terms.count >= previous.terms.count, isFuzzy == previous.isFuzzy else { return false }
        return zip(terms, previous.terms).allSatisfy { new, old in
            new.scope == old.scope && new.word.starts(with: old.word) && (old.digits == nil || new.digits != nil)
                && (new.digits ?? []).starts(with: old.digits ?? [])
        }
    }

    /// Whether `contact`, in the book named `bookName`, matches.
    public func matches(_ contact: Contact, bookName: String? = nil) -> Bool {
        matches(searchText: contact.searchText, bookName: bookName)
    }

    /// Whether the contact whose ``Contact/searchText`` is `searchText` matches.
    public func matches(searchText: String, bookName: String? = nil) -> Bool {
        var text = searchText
        return text.withUTF8 { matches(bytes: $0, from: 0, to: $0.count, bookName: bookName) }
    }

    /// Whether the search text in `bytes[start..<end]` matches; `bookName` is asked only for `book:` words.
    public func matches(
        bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, bookName: @autoclosure () -> String?
    ) -> Bool {
        terms.allSatisfy { rank(of: $0, bytes, start, end, bookName, firstHit: true) != nil }
    }

    /// How well the search text in `bytes[start..<end]` matches, lower being better, for listing the best
    /// first; nil when it does not. Each word adds 0 when the name starts with it, 1 when a word of the name
    /// does, 2 when the name has it inside, 3 when another field has it, and (a fuzzy search) 4 when the
    /// name has its letters in order ("adlv" in "Ada Lovelace").
    public func rank(
        bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, bookName: @autoclosure () -> String?
    ) -> Int? {
        var total = 0
        for term in terms {
            guard let rank = rank(of: term, bytes, start, end, bookName, firstHit: false) else { return nil }
            total += rank
        }
        return total
    }

    private func rank(
        of term: Term, _ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, _ bookName: () -> String?,
        firstHit: Bool
    ) -> Int? {
        if term.scope == .book {
            return bookName().map { Array(Contact.folded($0).utf8).containsBytes(term.word) } == true ? 3 : nil
        }
        var best: Int?
        var segment = start
        while segment < end {
            var segmentEnd = segment
            while segmentEnd < end && bytes[segmentEnd] != Tag.separator { segmentEnd += 1 }
            if segmentEnd > segment, let needle = term.needle(in: bytes[segment]) {
                let rank =
                    bytes[segment] == Tag.name
                    ? Self.nameRank(of: needle, bytes, from: segment + 1, to: segmentEnd, fuzzy: isFuzzy)
                    : Self.firstIndex(of: needle, in: bytes, from: segment + 1, to: segmentEnd) != nil ? 3 : nil
                if let rank {
                    best = min(best ?? rank, rank)
                    // The name comes first: once it is looked through, no other field does better than 3.
                    if firstHit || best! <= 3 { return best }
                }
            }
            segment = segmentEnd + 1
        }
        return best
    }

    /// How well the name alone matches, for a list that holds the names' sort keys but not the other fields:
    /// `bytes[start..<end]` is a name's sort key (``Contact/sortKey(_:)``). Nil when a word is not found in
    /// the name, or is scoped to another field: the whole search text decides those. Otherwise the rank the
    /// name gives, which is ``rank(bytes:from:to:bookName:)``'s but for a word whose letters are only in
    /// order in the name (4) and also found in another field (3 there).
    public func nameRank(bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int? {
        var total = 0
        for term in terms {
            guard let needle = term.needle(in: Tag.name),
                let rank = Self.nameRank(of: needle, bytes, from: start, to: end, fuzzy: isFuzzy)
            else { return nil }
            total += rank
        }
        return total
    }

    /// How well the name in `bytes[start..<end]` holds `needle`: 0 when it starts with it, 1 when a word of it
    /// does, 2 when it has it inside, 4 (a fuzzy search) when it has its letters in order; nil otherwise. A
    /// control character counts as a space, as the search text writes it (``Contact/searchText``).
    static func nameRank(
        of needle: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, fuzzy: Bool
    ) -> Int? {
        if let position = firstIndex(of: needle, in: bytes, from: start, to: end) {
            return position == start ? 0 : bytes[position - 1] <= 0x20 ? 1 : 2
        }
        return fuzzy && hasInOrder(needle, bytes, from: start, to: end) ? 4 : nil
    }

    /// Where `needle` first appears in `bytes[start..<end]`.
    static func firstIndex(of needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int)
        -> Int?
    {
        let count = needle.count
        guard count > 0 else { return start }
        guard end - start >= count else { return nil }
        return needle.withUnsafeBufferPointer { needle in
            let first = needle[0]
            var position = start
            let last = end - count
            while position <= last {
                if bytes[position] == first {
                    var offset = 1
                    while offset < count && bytes[position + offset] == needle[offset] { offset += 1 }
                    if offset == count { return position }
                }
                position += 1
            }
            return nil
        }
    }

    /// Whether `bytes[start..<end]` has the bytes of `needle` in order, others between them allowed.
    static func hasInOrder(_ needle: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int)
        -> Bool
    {
        var position = start
        for byte in needle {
            while position < end && bytes[position] != byte { position += 1 }
            guard position < end else { return false }
            position += 1
        }
        return true
    }

    /// The tags of the search text's segments, one byte each, and what separates the segments.
    enum Tag {
        static let name = UInt8(ascii: "n")
        static let email = UInt8(ascii: "e")
        static let organization = UInt8(ascii: "o")
        static let phone = UInt8(ascii: "t")
        static let group = UInt8(ascii: "g")
        static let address = UInt8(ascii: "a")
        static let notes = UInt8(ascii: "x")
        static let separator: UInt8 = 0x1F
    }
}

extension ContactSearch.Term {
    /// What to look for in a segment tagged `tag`; nil when this word does not look there.
    func needle(in tag: UInt8) -> [UInt8]? {
        if tag == ContactSearch.Tag.phone { return scope == nil || scope == .phone ? digits : nil }
        guard let scope else { return word }
        return scope.tag == tag ? word : nil
    }
}

extension Contact {
    /// Most of notes a search looks through; the rest of a long note is not searched.
    static let searchedNotes = 2000

    /// What a search looks through, folded (``Contact/sortKey(_:)``): one segment per value, each
    /// a tag byte and the text, phone numbers as their digits.
    public var searchText: String { Self.searchText(nameKey: Contact.sortKey(name), stored: searchTextAfterName) }

    /// ``searchText`` without the name's segment, which is the name's sort key: what the store keeps beside
    /// the sort key it keeps anyway. Empty, or the segment separator and the rest.
    package var searchTextAfterName: String {
        typealias Tag = ContactSearch.Tag
        // Written a byte at a time, without a string for each value (a tenth of a first download's merge).
        var bytes: [UInt8] = []
        func segment(_ tag: UInt8, _ text: String) {
            bytes.append(Tag.separator)
            bytes.append(tag)
            Self.appendFolded(text, to: &bytes)
        }
        for email in emails { segment(Tag.email, email.value) }
        if !organization.isEmpty { segment(Tag.organization, organization) }
        for phone in phones {
            bytes.append(Tag.separator)
            bytes.append(Tag.phone)
            // ``phoneDigits(_:)``: ASCII digits, which folding leaves as they are.
            bytes += phone.value.utf8.lazy.filter { (0x30...0x39).contains($0) }
        }
        for group in groups { segment(Tag.group, group) }
        if !address.isEmpty { segment(Tag.address, address.singleLine) }
        if !notes.isEmpty { segment(Tag.notes, String(notes.prefix(Self.searchedNotes))) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends ``folded(_:)`` of `text` to `bytes`; ASCII text a byte at a time, as ``sortKey(_:)`` and
    /// ``oneLine(_:)`` fold it (upper case to lower, a control character to a space).
    private static func appendFolded(_ text: String, to bytes: inout [UInt8]) {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else {
            bytes += folded(text).utf8
            return
        }
        for byte in text.utf8 {
            bytes.append(byte < 0x20 ? 0x20 : (0x41...0x5A).contains(byte) ? byte + 0x20 : byte)
        }
    }

    /// The ``searchText`` of a contact whose name's sort key is `nameKey` and whose stored text is `stored`:
    /// ``searchTextAfterName``, or the whole text as versions up to 0.3 kept it (it begins with the name's
    /// tag, which the text after the name never does), returned as it is.
    package static func searchText(nameKey: String, stored: String) -> String {
        if stored.utf8.first == ContactSearch.Tag.name { return stored }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1 + nameKey.utf8.count + stored.utf8.count)
        appendSearchText(nameKey: nameKey.utf8, stored: stored.utf8, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends to `bytes` the ``searchText`` of a contact whose name's sort key is `nameKey` and whose stored
    /// text is `stored`, as ``searchText(nameKey:stored:)`` makes it, for a search that reads the store's
    /// columns in place.
    package static func appendSearchText(
        nameKey: some Collection<UInt8>, stored: some Collection<UInt8>, to bytes: inout [UInt8]
    ) {
        if stored.first == ContactSearch.Tag.name {
            bytes += stored
            return
        }
        bytes.append(ContactSearch.Tag.name)
        // A control character is one byte of UTF-8, and no other scalar has a byte below 0x20 (``oneLine(_:)``).
        for byte in nameKey { bytes.append(byte < 0x20 ? 0x20 : byte) }
        bytes += stored
    }

    /// `text` folded for searching, on one line and without the byte that separates segments.
    static func folded(_ text: String) -> String {
        oneLine(Contact.sortKey(text))
    }

    /// A sort key on one line and without the byte that separates segments.
    private static func oneLine(_ key: String) -> String {
        guard key.utf8.contains(where: { $0 < 0x20 }) else { return key }
        // A control character is one byte of UTF-8, and no other scalar has a byte below 0x20.
        return String(decoding: key.utf8.map { $0 < 0x20 ? 0x20 : $0 }, as: UTF8.self)
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` appears in this array.
    fileprivate func containsBytes(_ needle: [UInt8]) -> Bool {
        withUnsafeBufferPointer { ContactSearch.firstIndex(of: needle, in: $0, from: 0, to: count) != nil }
    }
}
