import ContactsModel
import ContactsStore
import Foundation
import Terminal

extension Renderer {
    /// The conflicts panel: three lines per entry (the contact and field, the value kept, the value lost,
    /// each with its device and edit time), the selected one marked, then the last outcome.
    static func drawConflicts(_ grid: inout CellGrid, _ panel: ConflictsPanel, _ state: AppState, _ theme: Theme) {
        let body = state.layout.body
        let width = min(96, body.width - 2)
        let inner = max(1, width - 4)
        var tail: [(String, CellStyle)] = []
        if state.conflicts.isEmpty {
            tail.append(("No conflicts: no edit has been overwritten by another device's.", Theme.muted))
        }
        if let notice = panel.notice {
            let text = notice.isError ? "\(theme.failed) \(notice.text)" : notice.text
            tail += TextFormatting.wrap(text, width: inner).map { ($0, notice.isError ? Theme.error : .plain) }
        }
        // The entries get what room is left, scrolled to keep the selection in view.
        let perEntry = 3
        let room = max(1, (body.height - 2 - tail.count - 1) / perEntry)
        let count = state.conflicts.count
        let first = max(0, min(panel.selection - room + 1, count - room))
        let shown = Array(state.conflicts.enumerated()).dropFirst(first).prefix(room)
        let height = shown.count * perEntry + (shown.isEmpty ? 0 : 1) + tail.count + 2
        let frame = centered(width: width, height: height, in: body)
        let position = count > room ? "\(panel.selection + 1)/\(count)" : nil
        drawOverlayBox(&grid, frame, title: "Conflicts: values another edit overwrote", right: position, theme)
        var row = frame.row + 1
        func time(_ date: Date) -> String { TextFormatting.time(date, now: state.now, timeZone: state.timeZone) }
        for (index, entry) in shown {
            let isSelected = index == panel.selection
            let heading =
                (isSelected ? theme.pointer : " ") + " \(entry.contactName): \(entry.fieldName), \(time(entry.date))"
            grid.put(
                heading.padded(toWidth: inner), row: row, column: frame.column + 2, maxWidth: inner,
                style: isSelected ? Theme.selected : CellStyle(bold: true))
            for (offset, (word, side)) in [("kept", entry.kept), ("lost", entry.lost)].enumerated() {
                let value = side.value.text.isEmpty ? "(empty)" : side.value.text
                let line = "   \(word)  \(value)  (\(side.device), edited \(time(side.edited)))"
                grid.put(
                    line, row: row + 1 + offset, column: frame.column + 2, maxWidth: inner,
                    style: word == "lost" ? Theme.busy : Theme.muted)
            }
            row += perEntry
        }
        if !shown.isEmpty { row += 1 }
        for (text, style) in tail where row < frame.endRow - 1 {
            grid.put(text, row: row, column: frame.column + 2, maxWidth: inner, style: style)
            row += 1
        }
    }
}
