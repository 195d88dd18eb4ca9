import ContactsModel
import ContactsStore
import Foundation
import SyncCore
import Terminal

/// Keys in the books panel (``BooksPanel``): choosing a book or an action, typing what the action needs,
/// confirming a removal. The actions themselves are effects for ``ContactsApp``.
extension AppState {
    mutating func books(_ panel: inout BooksPanel, _ key: Key) -> Effect? {
        switch panel.step {
        case .choosing: return chooseInBooks(&panel, key)
        case .confirmingRemoval:
            panel.step = .choosing
            guard KeyMap.confirmBookRemoval.command(for: key) == .confirm, let book = selectedBook(panel) else {
                panel.notice = Message("Nothing deleted.")
                return nil
            }
            panel.isBusy = true
            return .removeBook(book.zoneID)
        case .typing(let question, let field): return type(question, field, in: &panel, key)
        }
    }

    /// The book the panel's selection is on.
    func selectedBook(_ panel: BooksPanel) -> AddressBook? {
        books.indices.contains(panel.selection) ? books[panel.selection] : nil
    }

    private mutating func chooseInBooks(_ panel: inout BooksPanel, _ key: Key) -> Effect? {
        guard let command = KeyMap.books.command(for: key) else {
            if case .character(let character) = key {
                panel.notice = Message("\(String(character)) does nothing here; press ? to see the keys.")
            }
            return nil
        }
        panel.notice = nil
        let book = selectedBook(panel)
        switch command {
        case .down: panel.selection = min(panel.selection + 1, max(0, books.count - 1))
        case .up: panel.selection = max(panel.selection - 1, 0)
        case .close: mode = .browsing
        case .show:
            guard let book else { return nil }
            mode = .browsing
            show(book: book.zoneID)
        case .create: panel.step = .typing(.name, TextField())
        case .accept: panel.step = .typing(.invitation, TextField())
        case .rename:
            guard let book else { return nil }
            if let refusal = refusal(toChange: book.zoneID) {
                panel.notice = refusal
                return nil
            }
            panel.step = .typing(.newName, TextField(book.name))
        case .share, .shareReadOnly, .unshare:
            guard let book else { return nil }
            if let refusal = Self.sharingRefusal(book) {
                panel.notice = refusal
                return nil
            }
            let question: BooksPanel.Question =
                command == .unshare ? .unshareFrom : .shareWith(readOnly: command == .shareReadOnly)
            panel.step = .typing(question, TextField())
        case .remove:
            guard let book else { return nil }
            if book.isDefault {
                panel.notice = Message("The default book cannot be deleted.", isError: true)
                return nil
            }
            panel.step = .confirmingRemoval
        }
        return nil
    }

    private mutating func type(
        _ question: BooksPanel.Question, _ field: TextField, in panel: inout BooksPanel, _ key: Key
    ) -> Effect? {
        if let command = KeyMap.bookPrompt.command(for: key) {
            guard command == .confirm else {
                panel.step = .choosing
                return nil
            }
            let text = field.text.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else {
                panel.notice = Message("Type something first, or press Esc.", isError: true)
                return nil
            }
            panel.step = .choosing
            panel.isBusy = true
            guard let book = selectedBook(panel) else { return nil }
            switch question {
            case .name: return .createBook(text)
            case .newName: return .renameBook(book.zoneID, text)
            case .shareWith(let readOnly): return .shareBook(book.zoneID, account: text, readOnly: readOnly)
            case .unshareFrom: return .unshareBook(book.zoneID, account: text)
            case .invitation: return .acceptInvitation(text)
            }
        }
        if let command = KeyMap.textEditing.command(for: key) {
            panel.edit { $0.apply(command) }
        } else if case .character(let character) = key {
            panel.edit { $0.insert(character) }
        }
        return nil
    }

    /// Why `book` cannot be shared from here, or nil when it can.
    private static func sharingRefusal(_ book: AddressBook) -> Message? {
        if !book.isOwn {
            return Message(
                "\(book.name) is \(book.ownerUsername ?? "someone else")'s: only its owner shares it.", isError: true)
        }
        if book.isDefault {
            return Message("The default book cannot be shared: press n to create one to share.", isError: true)
        }
        return nil
    }

    /// An action of the panel ended: its outcome, and the invitation to show, if it made one.
    public mutating func bookActionFinished(_ notice: Message, invitation: String? = nil) {
        guard case .books(var panel) = mode else {
            message = notice
            return
        }
        panel.isBusy = false
        panel.notice = notice
        if let invitation { panel.invitation = invitation }
        panel.selection = min(panel.selection, max(0, books.count - 1))
        mode = .books(panel)
    }
}
