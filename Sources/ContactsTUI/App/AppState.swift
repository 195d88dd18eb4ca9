import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import SyncCore

/// Everything the screen shows, as a plain value: the list, the selected contact's details, the mode (a form,
/// a question, the help), the sync status and the event log. Keys change it through ``handle(_:)``, which
/// never does I/O: it returns an ``Effect`` for ``ContactsApp`` to carry out. ``Renderer`` draws it.
public struct AppState: Sendable {
    /// What the keys are doing now.
    public enum Mode: Sendable, Equatable {
        case browsing
        /// Typing a search (after `/`).
        case searching
        case editing(EditForm)
        /// Asking "delete this contact? [y/N]".
        case confirmingDelete(ContactList.Row)
        /// Asking "merge these likely duplicates? [y/N]"; the first contact is kept.
        case confirmingMerge(DuplicateGroup)
        /// Asking which data to delete (after `D`).
        case deletingData(DeleteDataPrompt)
        /// The key help, scrolled by this many lines.
        case help(scroll: Int)
        /// The books panel (after `B`).
        case books(BooksPanel)
        /// The conflict log (after `C`).
        case conflicts(ConflictsPanel)
    }

    /// Work a key asks for that needs the device or the network.
    public enum Effect: Sendable, Equatable {
        /// Add the contact to the book (the default one when nil).
        case add(Contact, book: RecordZone.ID?)
        /// Save the form's changes onto the contact as the store has it now.
        case update(EditForm)
        /// Edit the contact as a text file in the person's editor, then save what changed.
        case editInEditor(Contact)
        /// Open the contact's photo in the person's viewer, downloading it first.
        case openPhoto(Contact)
        case delete(ContactList.Row)
        /// Look for the likely duplicates of the contact, then ask whether to merge them.
        case findDuplicates(ContactList.Row)
        /// Merge the contacts into the first.
        case merge(DuplicateGroup)
        /// Send this device's changes now.
        case backUp
        /// Fetch the server's changes now.
        case refresh
        case deleteLocalData
        case deleteServerData
        case createBook(String)
        case renameBook(RecordZone.ID, String)
        case shareBook(RecordZone.ID, account: String, readOnly: Bool)
        case unshareBook(RecordZone.ID, account: String)
        case acceptInvitation(String)
        /// Delete one's own book, or leave one shared with this account.
        case removeBook(RecordZone.ID)
        /// Put a conflict's lost value back into its contact.
        case restoreConflict(ContactConflict)
        /// Take a conflict out of the log.
        case dismissConflict(ContactConflict)
        case quit
    }

    /// A line for the hint bar that replaces the hints until the next key.
    public struct Message: Sendable, Equatable {
        public var text: String
        public var isError: Bool

        public init(_ text: String, isError: Bool = false) {
            self.text = text
            self.isError = isError
        }
    }

    /// Where everything goes at the current size.
    public private(set) var layout: Layout
    /// Whether the terminal shows Unicode; ASCII borders and symbols otherwise.
    public var unicode: Bool
    public var list: ContactList
    /// The books on this device, the default one first.
    public var books: [AddressBook] = []
    /// The conflict log, newest first (``ContactConflict``).
    public internal(set) var conflicts: [ContactConflict] = []
    /// How many records sync refused as tampered (``TamperedRecord``); the status pane shows a nonzero count.
    public var tamperedCount = 0
    /// Whose account key the person verified, and verified keys that changed (the status pane says so).
    public var keys = KeyTrust()
    /// The selected contact, loaded on demand (the list holds names only).
    public var details: Contact?
    public var mode: Mode = .browsing
    /// The search as typed; it stays when the search is kept with Enter.
    public internal(set) var searchInput = TextField()
    public var status = SyncStatus()
    public var log = EventLog()
    public var message: Message?
    /// Whether searches look through every field after the names (the app runs ``EveryFieldSearch`` for
    /// ``ContactList/pendingSearch``); the list's title says so while they do.
    public var searchesEveryField = false
    /// The device's name, shown in the status pane's title.
    public var deviceName: String
    /// The time "5 s ago" is measured from; the app sets it before each frame.
    public var now: Date
    /// Times are shown in this zone.
    public var timeZone: TimeZone

    /// A state for a `width` × `height` screen showing `rows`.
    public init(
        width: Int, height: Int, rows: [ContactList.Row] = [], deviceName: String = DataDirectory.defaultDevice,
        unicode: Bool = true,
        now: Date = Date(), timeZone: TimeZone = .current
    ) {
        layout = Layout(width: width, height: height)
        list = ContactList(rows: rows)
        self.deviceName = deviceName
        self.unicode = unicode
        self.now = now
        self.timeZone = timeZone
    }

    /// Lays the screen out again for a new size, keeping the selection in view.
    public mutating func resize(width: Int, height: Int) {
        guard width != layout.width || height != layout.height else { return }
        layout = Layout(width: width, height: height)
        list.scrollToSelection(viewport: layout.listRows)
    }

    /// The contact whose details should be loaded: the selected one, when ``details`` is another.
    public var detailsToLoad: UUID? {
        guard let id = list.selected?.id, details?.id != id else { return nil }
        return id
    }

    /// The book `zoneID` names, if this device has it.
    public func book(_ zoneID: RecordZone.ID) -> AddressBook? { books.first { $0.zoneID == zoneID } }

    /// Shows the next book alone, after the last one every book again (`f`).
    public mutating func showNextBook() {
        let ids = books.map(\.zoneID)
        let next: RecordZone.ID? =
            if let current = list.book, let index = ids.firstIndex(of: current) {
                index + 1 < ids.count ? ids[index + 1] : nil
            } else {
                ids.first
            }
        show(book: next)
    }

    /// Shows only the contacts of `zoneID` (every book when nil), and says so.
    mutating func show(book zoneID: RecordZone.ID?) {
        list.show(book: zoneID, viewport: layout.listRows)
        details = nil
        message = Message(
            zoneID.flatMap(book).map { "Showing the book \($0.name); f shows the next." } ?? "Showing every book.")
    }

    /// Replaces the books; a book gone (deleted, left, unshared) is no longer the one shown.
    public mutating func replaceBooks(_ books: [AddressBook]) {
        self.books = books
        if let shown = list.book, !books.contains(where: { $0.zoneID == shown }) {
            list.show(book: nil, viewport: layout.listRows)
        }
    }

    /// Why the contacts of `zoneID` cannot be changed here, or nil when they can.
    func refusal(toChange zoneID: RecordZone.ID) -> Message? {
        guard let book = book(zoneID), !book.canEdit else { return nil }
        let owner = book.ownerUsername.map { " by \($0)" } ?? ""
        return Message(
            "\(book.name) is shared with you read-only\(owner): its contacts cannot be changed here.", isError: true)
    }

    /// Replaces the list's rows, keeping the search and, if it is still there, the selection.
    public mutating func replaceRows(_ rows: ContactListing, selecting id: UUID? = nil) {
        list.replaceRows(rows, selecting: id ?? list.selected?.id, viewport: layout.listRows)
    }

    /// Replaces the list's rows with `rows`, in display order.
    public mutating func replaceRows(_ rows: [ContactList.Row], selecting id: UUID? = nil) {
        list.replaceRows(rows, selecting: id ?? list.selected?.id, viewport: layout.listRows)
    }

    /// Shows every field's matches of the list's search of `generation` (``EveryFieldSearch``).
    public mutating func showEveryField(_ positions: [Int], generation: Int) {
        list.showEveryField(positions, generation: generation, viewport: layout.listRows)
    }

    // MARK: Outcomes of effects

    /// The form's contact was saved as `id`: back to the list, with it selected.
    public mutating func saved(_ name: String, id: UUID) {
        mode = .browsing
        details = nil
        message = Message("Saved \(name); it syncs by itself, or press b to back up now.")
        if let position = list.position(of: id) { list.select(position, viewport: layout.listRows) }
    }

    /// The likely duplicates of `row` were looked for: ask whether to merge them, with `row` first (kept).
    public mutating func duplicatesFound(_ group: DuplicateGroup?, of row: ContactList.Row) {
        guard var group, let index = group.contacts.firstIndex(where: { $0.id == row.id }) else {
            message = Message("No likely duplicates of \(row.name) (same email, phone or name) in its book.")
            return
        }
        group.contacts.insert(group.contacts.remove(at: index), at: 0)
        mode = .confirmingMerge(group)
    }

    /// The device refused the form's contact: say why in the form.
    public mutating func saveFailed(_ reason: String) {
        if case .editing(var form) = mode {
            form.error = reason
            mode = .editing(form)
        } else {
            message = Message(reason, isError: true)
        }
    }
}
