import ContactsModel
import ContactsStore
import SyncCore
import Terminal

extension Renderer {
    /// The books panel: one line per book (its owner, your access, whom yours are shared with), then what
    /// the panel asks for, the last outcome and the last invitation made, whole, to copy.
    static func drawBooks(_ grid: inout CellGrid, _ panel: BooksPanel, _ state: AppState, _ theme: Theme) {
        let body = state.layout.body
        let width = min(96, body.width - 2)
        let inner = max(1, width - 4)
        var tail: [(String, CellStyle)] = []
        if panel.prompt != nil { tail.append(("", .plain)) }
        if panel.step == .confirmingRemoval, let book = state.selectedBook(panel) {
            let question =
                book.isOwn
                ? "Delete \(book.name) and its contacts, on every device and for everyone it is shared with? [y/N]"
                : "Leave \(book.name)? It leaves all your devices. [y/N]"
            tail += TextFormatting.wrap(question, width: inner).map { ($0, CellStyle(bold: true)) }
        }
        // The selected book's people: each one's safety number, and whether it was verified.
        if panel.step == .choosing, let book = state.selectedBook(panel) {
            for line in keyLines(of: book, keys: state.keys) {
                tail += TextFormatting.wrap(line.text, width: inner).map { ($0, line.style) }
            }
        }
        if panel.isBusy { tail.append(("Working…", Theme.muted)) }
        if let notice = panel.notice {
            let text = notice.isError ? "\(theme.failed) \(notice.text)" : notice.text
            tail += TextFormatting.wrap(text, width: inner).map { ($0, notice.isError ? Theme.error : .plain) }
        }
        if let invitation = panel.invitation {
            tail.append(("Invitation (copy it whole; only that account can open the book):", Theme.label))
            tail += TextFormatting.wrap(invitation, width: inner).map { ($0, CellStyle(bold: true)) }
        }
        // The books get what room is left, at least one line, scrolled to keep the selection in view.
        let room = max(1, body.height - 2 - 1 - tail.count)
        let first = max(0, min(panel.selection - room + 1, state.books.count - room))
        let shown = Array(state.books.enumerated()).dropFirst(first).prefix(room)
        let frame = centered(width: width, height: shown.count + 1 + tail.count + 2, in: body)
        let position = state.books.count > room ? "\(panel.selection + 1)/\(state.books.count)" : nil
        drawOverlayBox(&grid, frame, title: "Books", right: position, theme)
        let nameWidth = min(28, inner / 2)
        var row = frame.row + 1
        for (index, book) in shown {
            let isSelected = index == panel.selection
            let name = (isSelected ? theme.pointer : " ") + " " + book.name.truncated(toWidth: nameWidth - 2)
            let style = isSelected ? Theme.selected : CellStyle.plain
            grid.put(name.padded(toWidth: inner), row: row, column: frame.column + 2, maxWidth: inner, style: style)
            grid.put(
                access(of: book, keys: state.keys) ?? (book.isDefault ? "yours (default)" : "yours"), row: row,
                column: frame.column + 2 + nameWidth + 1,
                maxWidth: inner - nameWidth - 1, style: isSelected ? Theme.selected : Theme.muted)
            row += 1
        }
        row += 1
        for (text, style) in tail where row < frame.endRow - 1 {
            grid.put(text, row: row, column: frame.column + 2, maxWidth: inner, style: style)
            row += 1
        }
        // The prompt's field, on the line kept for it after the books.
        if let (label, field) = panel.prompt {
            let row = frame.row + 1 + shown.count + 1
            guard row < frame.endRow - 1 else { return }
            let column = frame.column + 2
            let used = grid.put(label + " ", row: row, column: column, maxWidth: inner, style: Theme.key)
            let fieldWidth = max(1, inner - used)
            let (text, cursor) = field.visible(width: fieldWidth)
            grid.restyle(
                Rect(row: row, column: column + used, width: fieldWidth, height: 1), style: CellStyle(underline: true))
            grid.put(text, row: row, column: column + used, maxWidth: fieldWidth, style: CellStyle(underline: true))
            grid.restyle(Rect(row: row, column: column + used + cursor, width: 1, height: 1), style: Theme.cursor)
        }
    }

    /// One line for each person of `book` but its reader: their safety number as this device knows it, and
    /// whether it is verified (`contacts book verify`), or that their verified key changed.
    static func keyLines(of book: AddressBook, keys: KeyTrust) -> [(text: String, style: CellStyle)] {
        let people = book.isOwn ? book.sharedWith : book.participants.filter { $0.role == .owner }
        return people.map { person in
            let number = keys.safetyNumbers[person.userRecordName] ?? "no key seen yet"
            if keys.refused.contains(person.userRecordName) {
                return ("\(person.username): KEY CHANGED since you verified it; verify again", Theme.error)
            }
            let state = keys.verified.contains(person.userRecordName) ? "verified" : "not verified"
            return ("\(person.username): \(number) (\(state))", Theme.muted)
        }
    }

    /// Who shares a book and how: "ada's ✓, read-only", "shared with grace ✓, tom (read-only)"; nil for one
    /// of one's own books that nobody else has. Each person's name is marked "✓" when the person verified
    /// their key, and "KEY CHANGED" when their verified key changed.
    static func access(of book: AddressBook, keys: KeyTrust = KeyTrust()) -> String? {
        func mark(_ userRecordName: String?) -> String {
            guard let userRecordName else { return "" }
            if keys.refused.contains(userRecordName) { return " KEY CHANGED" }
            return keys.verified.contains(userRecordName) ? " ✓" : ""
        }
        guard book.isOwn else {
            let owner = book.participants.first { $0.role == .owner }?.userRecordName
            return "\(book.ownerUsername.map { "\($0)'s\(mark(owner))" } ?? "shared with you"), "
                + (book.canEdit ? "read-write" : "read-only")
        }
        let others = book.sharedWith
        guard !others.isEmpty else { return nil }
        let names = others.map {
            "\($0.username)\(mark($0.userRecordName))\($0.permission == .readOnly ? " (read-only)" : "")"
                + ($0.acceptanceStatus == .pending ? " (invited)" : "")
        }
        return "shared with " + names.joined(separator: ", ")
    }
}
