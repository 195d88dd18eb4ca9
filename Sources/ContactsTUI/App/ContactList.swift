import ContactsModel
import ContactsStore
import Foundation
import SyncCore

/// The contact list: every contact's name in display order, the search that narrows it, the selection, and
/// how far it is scrolled. Only names and search texts are held (not whole contacts), so 100,000 contacts
/// cost a few tens of MB.
public struct ContactList: Sendable {
    /// One contact in the list.
    public struct Row: Sendable, Hashable, Identifiable {
        public var id: UUID
        public var name: String
        /// The name folded for sorting and searching (``Contact/sortKey(_:)``).
        public var sortKey: String
        /// The book the contact is in.
        public var book: RecordZone.ID
        /// What a search looks through (``ContactsModel/Contact/searchText``).
        public var searchText: String
        /// Whether the contact has a photo (marked in the list).
        public var hasPhoto = false

        /// A row for `name`.
        public init(id: UUID = UUID(), name: String, book: RecordZone.ID = Contact.zoneID) {
            self.init(
                id: id, name: name, sortKey: Contact.sortKey(name), book: book,
                searchText: Contact(id: id, name: name).searchText)
        }

        /// A row with a sort key computed elsewhere.
        public init(
            id: UUID, name: String, sortKey: String, book: RecordZone.ID = Contact.zoneID, searchText: String
        ) {
            self.id = id
            self.name = name
            self.sortKey = sortKey
            self.book = book
            self.searchText = searchText
        }

        /// The row of a store summary.
        public init(_ summary: ContactSummary) {
            self.init(
                id: summary.id, name: summary.name, sortKey: summary.sortKey, book: summary.zoneID,
                searchText: summary.searchText)
            hasPhoto = summary.hasPhoto
        }
    }

    /// Every contact, in display order: folded for case and accents, so "Ángel" sorts with "angel".
    public private(set) var rows: [Row]
    /// The search as typed; empty when the list is not narrowed.
    public private(set) var query = ""
    /// The one book shown; nil shows every book.
    public private(set) var book: RecordZone.ID?
    /// The positions in ``rows`` of the contacts shown; nil shows them all.
    private var matches: [Int]?
    private var matchedSearch: ContactSearch?
    /// The books' names, for `book:` words.
    public var bookNames: [RecordZone.ID: String] = [:]
    /// Built at the first search, as most sessions never search.
    private var index: SearchIndex?
    /// The selected row, counted among the shown rows.
    public private(set) var selection = 0
    /// The first shown row on screen.
    public private(set) var scroll = 0
    /// False while the list holds only the first rows, read for a quick first screen; the rest follow.
    public var isComplete = true

    /// A list of `rows`, which must be in display order; the first is selected.
    public init(rows: [Row] = []) {
        self.rows = rows
    }

    /// How many rows are shown (all of them, or the matches of the search).
    public var count: Int { matches?.count ?? rows.count }

    /// Whether a search or a book narrows the list.
    public var isFiltered: Bool { matches != nil }
    /// Whether a search narrows the list.
    public var isSearching: Bool { matchedSearch != nil }

    /// The shown row at `position`.
    public func row(at position: Int) -> Row {
        rows[matches?[position] ?? position]
    }

    /// The selected contact, if the list shows any.
    public var selected: Row? {
        count == 0 ? nil : row(at: selection)
    }

    // MARK: Moving

    /// Moves the selection by `delta` rows, stopping at either end, and scrolls to show it.
    public mutating func move(by delta: Int, viewport: Int) {
        select(selection + delta, viewport: viewport)
    }

    /// Selects the shown row at `position` (clamped) and scrolls just enough to show it.
    public mutating func select(_ position: Int, viewport: Int) {
        selection = max(0, min(position, count - 1))
        scrollToSelection(viewport: viewport)
    }

    /// Scrolls as little as possible to show the selection in a list `viewport` rows high.
    public mutating func scrollToSelection(viewport: Int) {
        let height = max(1, viewport)
        if selection < scroll { scroll = selection }
        if selection >= scroll + height { scroll = selection - height + 1 }
        scroll = max(0, min(scroll, count - height))
    }

    // MARK: Searching

    /// Narrows the list to the contacts `query` finds (``ContactsModel/ContactSearch``: every word, anywhere
    /// or where its scope says, case and accents aside, or a name with the word's letters in order), the best
    /// matches first (names that start with the words, then names with a word that does, …), and selects the
    /// first. An empty query shows
    /// every contact again, with the selected contact still selected.
    public mutating func search(_ query: String, viewport: Int) {
        guard query != self.query else { return }
        let keep = selected?.id
        self.query = query
        guard let search = ContactSearch(query, fuzzy: true) else {
            matches = bookMatches()
            matchedSearch = nil
            select(keep.flatMap(position(of:)) ?? 0, viewport: viewport)
            return
        }
        let narrowing = matches != nil && matchedSearch.map { search.narrows($0) } == true
        matches = searchIndex().matches(search, among: narrowing ? matches : bookMatches(), bookName: bookName(of:))
        matchedSearch = search
        scroll = 0
        select(0, viewport: viewport)
    }

    /// The index, built at the first search, as most sessions never search.
    private mutating func searchIndex() -> SearchIndex {
        if let index { return index }
        let built = SearchIndex(texts: rows.lazy.map(\.searchText))
        index = built
        return built
    }

    private func bookName(of position: Int) -> String? {
        bookNames[rows[position].book]
    }

    /// Shows only the contacts of `book` (every book when nil), keeping the search and, if still shown,
    /// the selected contact.
    public mutating func show(book: RecordZone.ID?, viewport: Int) {
        let keep = selected?.id
        self.book = book
        refilter()
        select(keep.flatMap(position(of:)) ?? 0, viewport: viewport)
    }

    /// The positions of the chosen book's rows; nil when every book is shown.
    private func bookMatches() -> [Int]? {
        guard let book else { return nil }
        return rows.indices.filter { rows[$0].book == book }
    }

    /// Applies the book and the search to the rows again.
    private mutating func refilter() {
        guard let search = ContactSearch(query, fuzzy: true) else {
            matches = bookMatches()
            return
        }
        matches = searchIndex().matches(search, among: bookMatches(), bookName: bookName(of:))
        matchedSearch = search
    }

    /// The shown position of the contact `id`, if shown.
    public func position(of id: UUID) -> Int? {
        guard let matches else { return rows.firstIndex { $0.id == id } }
        return matches.firstIndex { rows[$0].id == id }
    }

    // MARK: Reloading

    /// Replaces the rows (after sync or an edit changed the store), keeping the search, and selects `id` if
    /// it is still there; otherwise the selection stays at the same position.
    public mutating func replaceRows(_ rows: [Row], selecting id: UUID?, viewport: Int) {
        let previous = selection
        self.rows = rows
        isComplete = true
        index = nil
        refilter()
        select(id.flatMap(position(of:)) ?? previous, viewport: viewport)
    }
}
