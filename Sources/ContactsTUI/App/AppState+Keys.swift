import ContactsModel
import ContactsStore
import Foundation
import Terminal

extension AppState {
    /// Handles one key: updates the state and returns the work it asks for, if any. The tables of
    /// ``KeyMap`` decide what each key does in each mode.
    public mutating func handle(_ key: Key) -> Effect? {
        if key == .resize { return nil }
        if KeyMap.global.command(for: key) == .quit { return .quit }
        switch mode {
        case .browsing:
            message = nil
            return browse(key)
        case .searching:
            search(key)
            return nil
        case .editing(var form):
            let effect = edit(&form, key)
            if case .editing = mode { mode = .editing(form) }
            return effect
        case .confirmingDelete(let row):
            mode = .browsing
            if KeyMap.confirmDelete.command(for: key) == .confirm { return .delete(row) }
            message = Message("Kept \(row.name).")
            return nil
        case .confirmingMerge(let group):
            mode = .browsing
            if KeyMap.confirmMerge.command(for: key) == .confirm { return .merge(group) }
            message = Message("Kept them apart; nothing changed.")
            return nil
        case .deletingData(var prompt):
            return deleteData(&prompt, key)
        case .help(let scroll):
            help(key, scroll: scroll)
            return nil
        case .books(var panel):
            let effect = books(&panel, key)
            if case .books = mode { mode = .books(panel) }
            return effect
        case .conflicts(var panel):
            let effect = conflicts(&panel, key)
            if case .conflicts = mode { mode = .conflicts(panel) }
            return effect
        }
    }

    private mutating func browse(_ key: Key) -> Effect? {
        let page = max(1, layout.listRows)
        guard let command = KeyMap.browsing.command(for: key) else {
            if case .character(let character) = key {
                message = Message("\(String(character)) does nothing here; press ? to see the keys.")
            }
            return nil
        }
        switch command {
        case .down: list.move(by: 1, viewport: page)
        case .up: list.move(by: -1, viewport: page)
        case .pageDown: list.move(by: page, viewport: page)
        case .pageUp: list.move(by: -page, viewport: page)
        case .first: list.select(0, viewport: page)
        case .last: list.select(list.count - 1, viewport: page)
        case .search:
            mode = .searching
        case .clearSearch:
            searchInput = TextField()
            list.search("", viewport: page)
        case .add:
            if let book = list.book, let refusal = refusal(toChange: book) {
                message = refusal
                return nil
            }
            mode = .editing(EditForm(editing: nil))
        case .edit:
            guard let contact = contactToEdit() else { return nil }
            mode = .editing(EditForm(editing: contact))
        case .editInEditor:
            guard let contact = contactToEdit() else { return nil }
            return .editInEditor(contact)
        case .openPhoto:
            guard let selected = list.selected, let contact = details, contact.id == selected.id else {
                message = Message("There is no contact selected.")
                return nil
            }
            guard contact.photo != nil else {
                message = Message("\(contact.name) has no photo; contacts photo ID --set FILE gives one.")
                return nil
            }
            return .openPhoto(contact)
        case .mergeDuplicates:
            guard let selected = changeableSelection(orSay: "There is no contact to merge.") else { return nil }
            return .findDuplicates(selected)
        case .delete:
            guard let selected = changeableSelection(orSay: "There is no contact to delete.") else { return nil }
            mode = .confirmingDelete(selected)
        case .nextBook: showNextBook()
        case .books:
            mode = .books(
                BooksPanel(selection: list.book.flatMap { shown in books.firstIndex { $0.zoneID == shown } } ?? 0))
        case .conflicts: mode = .conflicts(ConflictsPanel())
        case .backUp: return .backUp
        case .refresh: return .refresh
        case .deleteData:
            mode = .deletingData(DeleteDataPrompt(pendingChanges: status.pendingChanges))
        case .help:
            mode = .help(scroll: 0)
        case .quit: return .quit
        }
        return nil
    }

    private mutating func search(_ key: Key) {
        let page = max(1, layout.listRows)
        if let command = KeyMap.searching.command(for: key) {
            switch command {
            case .accept:
                mode = .browsing
            case .clear:
                mode = .browsing
                searchInput = TextField()
                list.search("", viewport: page)
            case .down: list.move(by: 1, viewport: page)
            case .up: list.move(by: -1, viewport: page)
            }
            return
        }
        if let command = KeyMap.textEditing.command(for: key) {
            searchInput.apply(command)
        } else if case .character(let character) = key {
            searchInput.insert(character)
        } else {
            return
        }
        list.search(searchInput.text, viewport: page)
    }

    private mutating func edit(_ form: inout EditForm, _ key: Key) -> Effect? {
        if let command = KeyMap.form.command(for: key) {
            switch command {
            case .next: form.focusNext()
            case .previous: form.focusPrevious()
            case .cancel:
                mode = .browsing
                message = Message(form.original == nil ? "Nothing added." : "Nothing changed.")
            case .save:
                guard let contact = form.submit() else { return nil }
                return form.original == nil ? .add(contact, book: list.book) : .update(form)
            }
        } else if let command = KeyMap.textEditing.command(for: key) {
            form.apply(command)
        } else if case .character(let character) = key {
            form.type(character)
        }
        return nil
    }

    private mutating func deleteData(_ prompt: inout DeleteDataPrompt, _ key: Key) -> Effect? {
        if let command = KeyMap.deleteDataPrompt.command(for: key) {
            switch command {
            case .cancel:
                mode = .browsing
                message = Message("Nothing deleted.")
                return nil
            case .confirm:
                guard let target = prompt.submit() else {
                    mode = .deletingData(prompt)
                    return nil
                }
                mode = .browsing
                return target == .local ? .deleteLocalData : .deleteServerData
            }
        }
        if let command = KeyMap.textEditing.command(for: key) {
            prompt.input.apply(command)
        } else if case .character(let character) = key {
            prompt.input.insert(character)
        }
        prompt.error = nil
        mode = .deletingData(prompt)
        return nil
    }

    private mutating func help(_ key: Key, scroll: Int) {
        guard let command = KeyMap.help.command(for: key) else { return }
        let overlay = HelpOverlay(layout: layout, unicode: unicode)
        let page = max(1, overlay.visibleLines)
        let target: Int
        switch command {
        case .close:
            mode = .browsing
            return
        case .down: target = scroll + 1
        case .up: target = scroll - 1
        case .pageDown: target = scroll + page
        case .pageUp: target = scroll - page
        }
        mode = .help(scroll: max(0, min(target, overlay.maximumScroll)))
    }
}

extension AppState {
    /// The selected row, when its book lets this account change it; otherwise nil, with a message saying
    /// why (`none` when nothing is selected).
    mutating func changeableSelection(orSay none: String) -> ContactList.Row? {
        guard let selected = list.selected else {
            message = Message(none)
            return nil
        }
        if let refusal = refusal(toChange: selected.book) {
            message = refusal
            return nil
        }
        return selected
    }

    /// The selected contact, when it can be edited now; otherwise nil, with a message saying why.
    mutating func contactToEdit() -> Contact? {
        guard let selected = changeableSelection(orSay: "There is no contact to edit; press a to add one.") else {
            return nil
        }
        guard let details, details.id == selected.id else {
            message = Message("\(selected.name) is still loading; try again.")
            return nil
        }
        return details
    }
}
