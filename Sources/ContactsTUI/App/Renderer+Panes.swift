import ContactsModel
import ContactsStore
import Foundation
import SyncCore
import Terminal

extension Renderer {
    // MARK: List

    static func drawList(_ grid: inout CellGrid, _ state: AppState, _ theme: Theme) {
        let pane = state.layout.list
        let list = state.list
        // "Contacts · 7"; once it scrolls, "Contacts" and the position, "12/100,000"; searching, the query and
        // its matches, "/ada · 3 of 100,000". A "+" marks a list still being read.
        let more = list.isComplete ? "" : "+"
        // "…" while the store looks through the other fields for more matches.
        let looking = state.searchesEveryField && list.pendingSearch != nil ? " …" : ""
        let total = TextFormatting.count(list.rows.count) + more
        let scrolls = list.count > pane.content.height
        let position =
            scrolls ? "\(TextFormatting.count(list.selection + 1))/\(TextFormatting.count(list.count))\(more)" : nil
        let shownBook = list.book.flatMap(state.book)
        let name = shownBook.map { "Book \($0.name)" } ?? "Contacts"
        let title =
            list.isSearching
            ? "\(shownBook.map { "\($0.name) " } ?? "")/\(list.query) \(theme.separator) \(TextFormatting.count(list.count)) of \(total)\(looking)"
            : shownBook != nil
                ? "\(name) \(theme.separator) \(TextFormatting.count(list.count)) of \(total)"
                : scrolls ? name : "\(name) \(theme.separator) \(total)"
        drawTitle(&grid, pane.titleEdge, title, right: position)
        let area = pane.content
        guard list.count > 0 else {
            let text =
                list.isSearching
                ? !looking.isEmpty
                    ? ["No name contains \(list.query);", "looking through the other fields…"]
                    : [
                        "No \(state.searchesEveryField ? "contact has" : "name contains") \(list.query).",
                        "Esc shows every contact.",
                    ]
                : shownBook != nil
                    ? ["No contacts in this book.", "Press a to add one, f for the next book."]
                    : ["No contacts yet.", "Press a to add one."]
            for (offset, line) in text.enumerated() where offset < area.height {
                grid.put(
                    " " + line, row: area.row + offset, column: area.column, maxWidth: area.width, style: Theme.muted)
            }
            return
        }
        for offset in 0..<area.height {
            let position = list.scroll + offset
            guard position < list.count else { break }
            let isSelected = position == list.selection
            let row = list.row(at: position)
            // The book of a contact not in the default one, at the right, while every book is shown.
            let tag =
                list.book == nil && row.book != Contact.zoneID
                ? (state.book(row.book)?.name ?? row.book.zoneName).truncated(toWidth: area.width / 3) : ""
            let tagWidth = tag.isEmpty ? 0 : tag.displayWidth + 1
            let mark = row.hasPhoto ? " " + theme.photo : ""
            let text =
                (isSelected ? theme.pointer : " ") + " "
                + row.name.truncated(toWidth: max(1, area.width - 2 - tagWidth - mark.count)) + mark
            grid.put(
                text.padded(toWidth: area.width), row: area.row + offset, column: area.column, maxWidth: area.width,
                style: isSelected ? Theme.selected : .plain)
            if !tag.isEmpty {
                grid.put(
                    tag, row: area.row + offset, column: area.column + area.width - tagWidth, maxWidth: tagWidth - 1,
                    style: isSelected ? Theme.selected : Theme.muted)
            }
        }
    }

    // MARK: Details

    static func drawDetails(_ grid: inout CellGrid, _ state: AppState, _ theme: Theme) {
        let pane = state.layout.details
        let area = pane.content
        guard let selected = state.list.selected else {
            drawTitle(&grid, pane.titleEdge, "Details")
            if area.height > 0 {
                grid.put(
                    " No contact selected.", row: area.row, column: area.column, maxWidth: area.width,
                    style: Theme.muted)
            }
            return
        }
        drawTitle(&grid, pane.titleEdge, selected.name)
        guard let contact = state.details, contact.id == selected.id else {
            if area.height > 0 {
                grid.put(" Loading…", row: area.row, column: area.column, maxWidth: area.width, style: Theme.muted)
            }
            return
        }
        var entries: [LabeledText] = []
        for email in contact.emails { entries.append(LabeledText(label: "Email", value: email.labeledText)) }
        for phone in contact.phones { entries.append(LabeledText(label: "Phone", value: phone.labeledText)) }
        if !contact.organization.isEmpty {
            entries.append(LabeledText(label: "Organisation", value: contact.organization, maxLines: 2))
        }
        if !contact.address.isEmpty {
            entries.append(LabeledText(label: "Address", value: contact.address.singleLine, maxLines: 2))
        }
        if let birthday = contact.birthday {
            entries.append(LabeledText(label: "Birthday", value: birthday.spelledOut))
        }
        if let anniversary = contact.anniversary {
            entries.append(LabeledText(label: "Anniversary", value: anniversary.spelledOut))
        }
        if !contact.groups.isEmpty {
            entries.append(LabeledText(label: "Groups", value: contact.groups.joined(separator: ", "), maxLines: 2))
        }
        if !contact.notes.isEmpty { entries.append(LabeledText(label: "Notes", value: contact.notes, maxLines: 6)) }
        if let photo = contact.photo {
            entries.append(LabeledText(label: "Photo", value: "\(photo.summary) \(theme.separator) P opens it"))
        }
        if entries.isEmpty {
            entries.append(LabeledText(label: "", value: "No details; press e to add some.", style: Theme.muted))
        }
        if let book = state.book(selected.book), state.books.count > 1 || !book.isDefault {
            entries.append(
                LabeledText(label: "Book", value: access(of: book).map { "\(book.name) · \($0)" } ?? book.name))
        }
        entries.append(
            LabeledText(
                label: "Record", value: "\(selected.book.zoneName)/\(contact.id.uuidString)", style: Theme.muted))
        drawLabeled(&grid, entries, in: area, labelWidth: min(13, area.width / 3))
    }

    // MARK: Sync status

    static func drawStatus(_ grid: inout CellGrid, _ state: AppState, _ theme: Theme) {
        let pane = state.layout.status
        let area = pane.content
        let status = state.status
        drawTitle(&grid, pane.titleEdge, "Sync \(theme.separator) device \(state.deviceName)")
        let labelWidth = 10

        var stateText: String
        var stateStyle: CellStyle
        switch status.phase {
        case .idle:
            stateText = "\(theme.idle) idle"
            stateStyle = Theme.ok
        case .syncing(.fetch):
            stateText = "\(theme.syncing) fetching"
            if status.fetchedSoFar > 0 {
                stateText += " \(theme.separator) fetched \(TextFormatting.count(status.fetchedSoFar))"
            }
            stateStyle = Theme.busy
        case .syncing(.send):
            stateText = "\(theme.syncing) sending"
            if status.pendingChanges > 0 {
                stateText += " \(theme.separator) \(TextFormatting.count(status.pendingChanges)) to go"
            }
            stateStyle = Theme.busy
        case .error(let message):
            stateText = "\(theme.failed) error: \(message)"
            stateStyle = Theme.error
        }
        let pending =
            status.pendingChanges == 0
            ? "nothing to send"
            : TextFormatting.plural(status.pendingChanges, "change") + " not on the server yet"
        let lastSync =
            status.lastSuccess.map {
                "\(TextFormatting.time($0, now: state.now, timeZone: state.timeZone)) (\(TextFormatting.age(of: $0, now: state.now)))"
            } ?? "never"
        let push =
            !status.pushConnected
            ? "not connected; polling for changes"
            : status.reconnectedAt.map {
                "reconnected at \(TextFormatting.time($0, now: state.now, timeZone: state.timeZone))"
            } ?? "connected"
        let signIn = SyncStatus.signInCommand(server: status.server, device: state.deviceName)
        let account =
            if status.isSignedOutByServer {
                // The state above says why; here, what to do.
                "\(status.account ?? "?"): signed out; run \(signIn)"
            } else {
                status.account.map { "\($0) on \(status.server.map(SyncStatus.serverName) ?? "?")" }
                    ?? "not signed in: run \(signIn)"
            }

        // One line each, by priority, so that a short pane keeps what matters most; then the lines left over
        // let a long error (up to three lines) and the scheduler's decision (two) wrap.
        // The conflict log only when it holds something: a value another edit overwrote is worth a look.
        let conflicts =
            state.conflicts.isEmpty
            ? []
            : [
                LabeledText(
                    label: "Conflicts",
                    value: TextFormatting.plural(state.conflicts.count, "value") + " overwritten: press C to review",
                    style: Theme.busy)
            ]
        // Records refused as tampered only when there are some: what the server sent was forged or rolled back.
        let tampered =
            state.tamperedCount == 0
            ? []
            : [
                LabeledText(
                    label: "Refused",
                    value: TextFormatting.plural(state.tamperedCount, "record")
                        + " refused as tampered: see contacts tampered",
                    style: Theme.error, maxLines: 2)
            ]
        // A verified account key the server no longer gives: loud, until the person verifies again.
        let keys = state.keys.warnings.prefix(1).map {
            LabeledText(label: "Keys", value: $0, style: Theme.error, maxLines: 3)
        }
        // The sign-in command names the server and device, so it may wrap. Not signed in, it is what to do next,
        // and comes before the scheduler's lines; signed out by the server, those lines go, as nothing syncs
        // until the person signs in again.
        let signedOut = status.isSignedOutByServer
        let accountFirst = signedOut || status.account == nil
        let accountEntry = [LabeledText(label: "Account", value: account, maxLines: 3)]
        let schedule =
            signedOut
            ? [LabeledText(label: "Last sync", value: lastSync)]
            : [
                LabeledText(label: "Next", value: status.decision(at: state.now), maxLines: 2),
                LabeledText(label: "Last sync", value: lastSync),
                LabeledText(label: "Push", value: push, style: status.pushConnected ? .plain : Theme.muted),
            ]
        let entries: [LabeledText] =
            [
                LabeledText(label: "State", value: stateText, style: stateStyle, maxLines: 3),
                LabeledText(label: "Pending", value: pending, style: status.pendingChanges > 0 ? Theme.busy : .plain),
            ] + (accountFirst ? accountEntry : []) + keys + tampered + conflicts + schedule
            + (accountFirst ? [] : accountEntry)
        drawLabeled(&grid, entries, in: area, labelWidth: labelWidth)
    }

    /// A value with its label, for the details and status panes.
    struct LabeledText {
        var label: String
        var value: String
        var style: CellStyle = .plain
        /// How many lines the value may wrap to when the pane has lines to spare.
        var maxLines = 1
    }

    /// Draws `entries` as `label  value` rows in `area`: one line each while they fit, then spare lines to the
    /// entries that wrap, in order; a value cut short ends with `…`.
    static func drawLabeled(_ grid: inout CellGrid, _ entries: [LabeledText], in area: Rect, labelWidth: Int) {
        let valueWidth = max(1, area.width - labelWidth - 2)
        let shown = entries.prefix(area.height)
        let wrapped = shown.map { TextFormatting.wrap($0.value, width: valueWidth) }
        var lines = shown.map { _ in 1 }
        var spare = area.height - shown.count
        for index in lines.indices where spare > 0 {
            let extra = min(spare, min(shown[index].maxLines, wrapped[index].count) - 1)
            if extra > 0 {
                lines[index] += extra
                spare -= extra
            }
        }
        var row = area.row
        for (index, entry) in shown.enumerated() {
            var parts = Array(wrapped[index].prefix(lines[index]))
            if wrapped[index].count > lines[index] || parts.isEmpty {
                // What does not fit: the rest joins the last line shown, cut with an ellipsis.
                let rest = ([parts.popLast() ?? ""] + wrapped[index].dropFirst(lines[index])).joined(separator: " ")
                parts.append(
                    lines[index] == 1 ? entry.value.truncated(toWidth: valueWidth) : rest.truncated(toWidth: valueWidth)
                )
            }
            for (offset, part) in parts.enumerated() {
                if offset == 0 {
                    grid.put(
                        " " + entry.label, row: row, column: area.column, maxWidth: labelWidth + 1, style: Theme.label)
                }
                grid.put(part, row: row, column: area.column + labelWidth + 1, maxWidth: valueWidth, style: entry.style)
                row += 1
            }
        }
    }

    // MARK: Event log

    static func drawEvents(_ grid: inout CellGrid, _ state: AppState, _ pane: Layout.Pane) {
        drawTitle(
            &grid, pane.titleEdge, "Events", right: state.log.count > 0 ? TextFormatting.count(state.log.count) : nil)
        let area = pane.content
        let entries = state.log.last(area.height)
        if entries.isEmpty, area.height > 0 {
            grid.put(" Nothing yet.", row: area.row, column: area.column, maxWidth: area.width, style: Theme.muted)
        }
        for (offset, entry) in entries.enumerated() {
            let row = area.row + offset
            let time = TextFormatting.time(entry.date, now: state.now, timeZone: state.timeZone)
            let used = grid.put(
                " " + time + " ", row: row, column: area.column, maxWidth: area.width, style: Theme.muted)
            grid.put(
                entry.text.truncated(toWidth: area.width - used - 1), row: row, column: area.column + used,
                maxWidth: area.width - used - 1, style: entry.isError ? Theme.error : .plain)
        }
    }
}
