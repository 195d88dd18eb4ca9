import ContactsModel
import ContactsStore
import Terminal

extension Renderer {
    // MARK: The form

    static func drawForm(_ grid: inout CellGrid, _ form: EditForm, _ state: AppState, _ theme: Theme) {
        let frame = centered(width: 80, height: state.layout.body.height, in: state.layout.body)
        let inner = frame.inset(top: 1, left: 2, bottom: 1, right: 2)
        let errorLines =
            form.error.map { TextFormatting.wrap("\(theme.failed) \($0)", width: inner.width).prefix(2) } ?? []
        let visible = max(1, inner.height - (errorLines.isEmpty ? 0 : errorLines.count + 1))
        let first = form.focus >= visible ? form.focus - visible + 1 : 0
        let position = form.fields.count > visible ? "\(form.focus + 1)/\(form.fields.count)" : nil
        var title = form.title
        if let original = form.original { title += " \(theme.separator) \(original.name)" }
        drawOverlayBox(&grid, frame, title: title, right: position, theme)

        let labelWidth = 16
        let valueColumn = inner.column + labelWidth
        let valueWidth = max(1, inner.width - labelWidth)
        for (offset, field) in form.fields[first...].prefix(visible).enumerated() {
            let row = inner.row + offset
            let isFocused = first + offset == form.focus
            let label = (isFocused ? theme.pointer : " ") + " " + field.slot.label
            grid.put(
                label, row: row, column: inner.column, maxWidth: labelWidth - 1,
                style: isFocused ? Theme.key : Theme.label)
            guard isFocused else {
                grid.put(
                    field.input.text.truncated(toWidth: valueWidth), row: row, column: valueColumn, maxWidth: valueWidth
                )
                continue
            }
            let (shown, cursor) = field.input.visible(width: valueWidth)
            grid.restyle(
                Rect(row: row, column: valueColumn, width: valueWidth, height: 1), style: CellStyle(underline: true))
            if shown.isEmpty, field.slot.isEmail || field.slot.isPhone {
                let example = field.slot.isEmail ? "work: ada@example.org" : "mobile: +44 20 7946 0000"
                grid.put(
                    "label: value, such as \(example)", row: row, column: valueColumn, maxWidth: valueWidth,
                    style: CellStyle(color: .muted, underline: true))
            } else {
                grid.put(shown, row: row, column: valueColumn, maxWidth: valueWidth, style: CellStyle(underline: true))
            }
            grid.restyle(Rect(row: row, column: valueColumn + cursor, width: 1, height: 1), style: Theme.cursor)
        }
        for (offset, line) in errorLines.enumerated() {
            grid.put(
                line, row: inner.endRow - errorLines.count + offset, column: inner.column, maxWidth: inner.width,
                style: Theme.error)
        }
    }

    // MARK: Questions

    static func drawDeleteQuestion(_ grid: inout CellGrid, _ row: ContactList.Row, _ state: AppState, _ theme: Theme) {
        let width = min(60, state.layout.body.width - 4)
        let inner = width - 4
        var lines: [(String, CellStyle)] = [("Delete \(row.name)?".truncated(toWidth: inner), CellStyle(bold: true))]
        lines += TextFormatting.wrap(
            "It is removed here now, and from your other devices when they sync.", width: inner
        ).map { ($0, .plain) }
        lines.append(("", .plain))
        lines += TextFormatting.wrap("y deletes it; any other key keeps it. [y/N]", width: inner).map {
            ($0, Theme.muted)
        }
        drawQuestion(&grid, title: "Delete contact", lines: lines, width: width, state, theme)
    }

    static func drawMergeQuestion(_ grid: inout CellGrid, _ group: DuplicateGroup, _ state: AppState, _ theme: Theme) {
        let width = min(64, state.layout.body.width - 4)
        let inner = width - 4
        let kept = group.contacts[0].name
        let others = group.contacts.dropFirst().map(\.name).joined(separator: ", ")
        var lines = TextFormatting.wrap("Merge \(kept) with \(others)?", width: inner).map {
            ($0, CellStyle(bold: true))
        }
        lines += TextFormatting.wrap("They look alike: \(group.reasons.joined(separator: ", ")).", width: inner).map {
            ($0, CellStyle.plain)
        }
        lines += TextFormatting.wrap(
            "\(kept) keeps every distinct value of the others, which are deleted here now and from your other "
                + "devices when they sync.", width: inner
        ).map { ($0, .plain) }
        lines.append(("", .plain))
        lines += TextFormatting.wrap("y merges them; any other key keeps them apart. [y/N]", width: inner).map {
            ($0, Theme.muted)
        }
        drawQuestion(&grid, title: "Merge duplicates", lines: lines, width: width, state, theme)
    }

    static func drawDeleteDataPrompt(
        _ grid: inout CellGrid, _ prompt: DeleteDataPrompt, _ state: AppState, _ theme: Theme
    ) {
        let width = min(64, state.layout.body.width - 4)
        let inner = width - 4
        var text =
            "Type local to delete this device's copy (the server keeps its own, and the next sync brings it back), "
            + "or server to delete every contact on the server and on all your devices."
        if prompt.pendingChanges > 0 {
            text += " \(TextFormatting.plural(prompt.pendingChanges, "change")) not yet on the server would be lost."
        }
        let errorLines = prompt.error.map { TextFormatting.wrap("\(theme.failed) \($0)", width: inner) } ?? []
        // The field and the error always show; on a small screen the explanation gives way.
        let room = max(1, state.layout.body.height - 2 - 2 - errorLines.count)
        var explanation = TextFormatting.wrap(text, width: inner)
        if explanation.count > room {
            let rest = explanation[(room - 1)...].joined(separator: " ")
            explanation = Array(explanation.prefix(room - 1)) + [rest.truncated(toWidth: inner)]
        }
        let lines: [(String, CellStyle)] =
            explanation.map { ($0, .plain) } + [("", .plain), ("", .plain)] + errorLines.map { ($0, Theme.error) }
        let frame = drawQuestion(&grid, title: "Delete data", lines: lines, width: width, state, theme)
        // The input line: a pointer, then the field with its cursor.
        let row = frame.row + 2 + explanation.count
        guard row < frame.endRow - 1 else { return }
        let column = frame.column + 2
        grid.put(theme.pointer + " ", row: row, column: column, style: Theme.key)
        let fieldWidth = max(1, inner - 2)
        let (shown, cursor) = prompt.input.visible(width: fieldWidth)
        grid.restyle(
            Rect(row: row, column: column + 2, width: fieldWidth, height: 1), style: CellStyle(underline: true))
        grid.put(shown, row: row, column: column + 2, maxWidth: fieldWidth, style: CellStyle(underline: true))
        grid.restyle(Rect(row: row, column: column + 2 + cursor, width: 1, height: 1), style: Theme.cursor)
    }

    /// A box in the middle of the body with `lines`, cut to fit. Returns its frame.
    @discardableResult
    private static func drawQuestion(
        _ grid: inout CellGrid, title: String, lines: [(String, CellStyle)], width: Int, _ state: AppState,
        _ theme: Theme
    ) -> Rect {
        let frame = centered(width: width, height: lines.count + 2, in: state.layout.body)
        drawOverlayBox(&grid, frame, title: title, theme)
        for (offset, line) in lines.prefix(frame.height - 2).enumerated() {
            grid.put(
                line.0, row: frame.row + 1 + offset, column: frame.column + 2, maxWidth: frame.width - 4, style: line.1)
        }
        return frame
    }

    // MARK: Help

    static func drawHelp(_ grid: inout CellGrid, scroll: Int, _ state: AppState, _ theme: Theme) {
        let overlay = HelpOverlay(layout: state.layout, unicode: state.unicode)
        let frame = overlay.frame
        let first = max(0, min(scroll, overlay.maximumScroll))
        let shown = overlay.lines[first...].prefix(overlay.visibleLines)
        let position =
            overlay.maximumScroll > 0 ? "\(first + 1)-\(first + shown.count) of \(overlay.lines.count)" : nil
        drawOverlayBox(&grid, frame, title: "Keys", right: position, theme)
        let width = frame.width - 4
        for (offset, line) in shown.enumerated() {
            let row = frame.row + 1 + offset
            let column = frame.column + 2
            switch line {
            case .blank: break
            case .heading(let title):
                grid.put(title, row: row, column: column, maxWidth: width, style: Theme.heading)
            case .entry(let keys, let help):
                grid.put(keys, row: row, column: column, maxWidth: overlay.keysWidth, style: Theme.key)
                grid.put(
                    help, row: row, column: column + overlay.keysWidth + 2, maxWidth: width - overlay.keysWidth - 2)
            }
        }
    }
}
