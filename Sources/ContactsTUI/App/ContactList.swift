import ContactsModel
import ContactsStore
import Foundation
import SyncCore

/// The contact list: every contact's name in display order, the search that narrows it, the selection, and
/// how far it is scrolled. The list holds what it shows and what a search by name looks through, packed
/// (``ContactsStore/ContactListing``, about 60 bytes a contact); the other fields stay in the store. A search
/// is answered at once from the names, then from every field once the store has looked (``EveryFieldSearch``,
/// which the app runs in the background and hands back with ``showEveryField(_:generation:viewport:)``).
public struct ContactList: Sendable {
    /// One contact in the list.
    public struct Row: Sendable, Hashable, Identifiable {
        public var id: UUID
        public var name: String
        /// The name folded for sorting and searching (``Contact/sortKey(_:)``).
        public var sortKey: String
        /// The book the contact is in.
        public var book: RecordZone.ID
        /// Whether the contact has a photo (marked in the list).
        public var hasPhoto = false

        /// A row for `name`.
        public init(id: UUID = UUID(), name: String, book: RecordZone.ID = Contact.zoneID, hasPhoto: Bool = false) {
            self.init(id: id, name: name, sortKey: Contact.sortKey(name), book: book, hasPhoto: hasPhoto)
        }

        /// A row with a sort key computed elsewhere.
        public init(id: UUID, name: String, sortKey: String, book: RecordZone.ID, hasPhoto: Bool) {
            self.id = id
            self.name = name
            self.sortKey = sortKey
            self.book = book
            self.hasPhoto = hasPhoto
        }
    }

    /// A search whose matches in every field the list still waits for.
    public struct PendingSearch: Sendable {
        public var search: ContactSearch
        public var book: RecordZone.ID?
        /// The list's ``generation`` the matches are for: the rows and the book as they were asked for.
        public var generation: Int
        /// The contact to select once they are shown: the one selected when the list was read again, which
        /// the names alone may not have found.
        public var select: UUID?
    }

    /// Every contact, in display order: folded for case and accents, so "Ángel" sorts with "angel".
    public private(set) var rows: ContactListing
    /// The search as typed; empty when the list is not narrowed.
    public private(set) var query = ""
    /// The one book shown; nil shows every book.
    public private(set) var book: RecordZone.ID?
    /// The positions in ``rows`` of the contacts shown; nil shows them all.
    private var matches: [Int]?
    private var matchedSearch: ContactSearch?
    /// The positions the names alone matched, which a longer search narrows (every field's matches are
    /// not narrowed by name: the word may be in another field).
    private var nameMatches: [Int]?
    /// The selected row, counted among the shown rows.
    public private(set) var selection = 0
    /// The first shown row on screen.
    public private(set) var scroll = 0
    /// False while the list holds only the first rows, read for a quick first screen; the rest follow.
    public var isComplete = true
    /// Counts the changes of rows, search and book: every field's matches are shown only for the generation
    /// they were looked for.
    public private(set) var generation = 0
    /// The search to run through every field, until its matches are shown.
    public private(set) var pendingSearch: PendingSearch?

    /// A list of `rows`, which must be in display order; the first is selected.
    public init(rows: [Row] = []) {
        var listing = ContactListing()
        for row in rows {
            listing.append(
                id: row.id, name: Array(row.name.utf8), sortKey: Array(row.sortKey.utf8), book: row.book,
                hasPhoto: row.hasPhoto)
        }
        self.init(listing)
    }

    /// A list of the store's `rows`; the first is selected.
    public init(_ rows: ContactListing) {
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
        let index = matches?[position] ?? position
        return Row(
            id: rows.ids[index], name: rows.name(at: index), sortKey: rows.sortKey(at: index),
            book: rows.book(at: index), hasPhoto: rows.hasPhoto(at: index))
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

    /// Selects the shown row at `position` where the selection was on screen, `offset` rows below the
    /// first: the selected contact stays in its place while others come and go around it.
    private mutating func select(_ position: Int, keepingOffset offset: Int, viewport: Int) {
        selection = max(0, min(position, count - 1))
        scroll = selection - offset
        scrollToSelection(viewport: viewport)
    }

    // MARK: Searching

    /// Narrows the list to the contacts `query` finds (``ContactsModel/ContactSearch``: every word, anywhere
    /// or where its scope says, case and accents aside, or a name with the word's letters in order), the best
    /// matches first (names that start with the words, then names with a word that does, …), and selects the
    /// first. The names answer at once; every field's matches follow (``pendingSearch``). An empty query
    /// shows every contact again, with the selected contact still selected.
    public mutating func search(_ query: String, viewport: Int) {
        guard query != self.query else { return }
        let keep = selected?.id
        self.query = query
        guard let search = ContactSearch(query, fuzzy: true) else {
            refilter()
            select(keep.flatMap(position(of:)) ?? 0, viewport: viewport)
            return
        }
        // The same words ("ada" and "ada "): the same matches.
        guard search != matchedSearch else { return }
        let narrowing = nameMatches != nil && matchedSearch.map { search.narrows($0) } == true
        apply(search, among: narrowing ? nameMatches : bookMatches())
        scroll = 0
        select(0, viewport: viewport)
    }

    /// Shows the names' matches of `search` among `candidates` (every row when nil), and asks for every
    /// field's (a new ``generation``).
    private mutating func apply(_ search: ContactSearch, among candidates: [Int]?) {
        generation += 1
        nameMatches = NameSearch.matches(search, in: rows, among: candidates)
        matches = nameMatches
        matchedSearch = search
        pendingSearch = PendingSearch(search: search, book: book, generation: generation)
    }

    /// Shows every field's matches of the search of `generation` (``EveryFieldSearch``), if the list has
    /// not changed since. The contact selected when the list was read again is selected again; otherwise the
    /// selected contact stays selected, unless the selection is still the first row (the best match).
    public mutating func showEveryField(_ positions: [Int], generation: Int, viewport: Int) {
        guard generation == self.generation, let pending = pendingSearch else { return }
        let keep = pending.select ?? (selection == 0 ? nil : selected?.id)
        let offset = selection - scroll
        matches = positions
        pendingSearch = nil
        select(keep.flatMap(position(of:)) ?? 0, keepingOffset: keep == nil ? 0 : offset, viewport: viewport)
    }

    /// Stops waiting for every field's matches of `generation` (their search failed): the names' matches stay.
    public mutating func giveUpEveryField(generation: Int) {
        if generation == self.generation { pendingSearch = nil }
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
        book.map { rows.indices(inBook: $0) }
    }

    /// Applies the book and the search to the rows again; every field's matches are asked for again.
    private mutating func refilter() {
        guard let search = ContactSearch(query, fuzzy: true) else {
            generation += 1
            matches = bookMatches()
            matchedSearch = nil
            nameMatches = nil
            pendingSearch = nil
            return
        }
        apply(search, among: bookMatches())
    }

    /// The shown position of the contact `id`, if shown.
    public func position(of id: UUID) -> Int? {
        guard let matches else { return rows.ids.firstIndex(of: id) }
        return matches.firstIndex { rows.ids[$0] == id }
    }

    // MARK: Reloading

    /// Replaces the rows (after sync or an edit changed the store), keeping the search, and selects `id` if
    /// it is still there, in the same place on screen; otherwise the selection stays at the same position.
    /// While a search waits for every field's matches, a contact the names did not find is selected once
    /// they are shown (``PendingSearch/select``).
    public mutating func replaceRows(_ rows: ContactListing, selecting id: UUID?, viewport: Int) {
        let previous = selection
        let offset = selection - scroll
        self.rows = rows
        isComplete = true
        refilter()
        let found = id.flatMap(position(of:))
        if found == nil, pendingSearch != nil { pendingSearch?.select = id }
        select(found ?? previous, keepingOffset: offset, viewport: viewport)
    }

    /// Replaces the rows with `rows`, which must be in display order.
    public mutating func replaceRows(_ rows: [Row], selecting id: UUID?, viewport: Int) {
        replaceRows(ContactList(rows: rows).rows, selecting: id, viewport: viewport)
    }
}
