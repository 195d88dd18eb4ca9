import Terminal

/// Draws an ``AppState`` into a ``CellGrid``: a pure function of the state, so that a test reads the screen
/// as text and the app only copies the grid to the terminal.
///
/// Only rows on screen are looked at, so a list of 100,000 contacts renders as fast as one of ten. All text,
/// whatever its origin, goes through ``CellGrid/put(_:row:column:maxWidth:style:)``, which shows control
/// characters as visible escapes: a name from the server is displayed, never interpreted.
public enum Renderer {
    /// The screen for `state`, at the size of its layout.
    public static func render(_ state: AppState) -> CellGrid {
        let layout = state.layout
        var grid = CellGrid(width: layout.width, height: layout.height)
        guard layout.arrangement != .tooSmall else {
            drawTooSmall(&grid)
            return grid
        }
        let theme = Theme.forTerminal(unicode: state.unicode)
        for box in layout.boxes { grid.drawBox(box, borders: theme.borders, style: Theme.border) }
        for divider in layout.dividers {
            grid.drawDivider(divider.box, row: divider.row, borders: theme.borders, style: Theme.border)
        }
        drawList(&grid, state, theme)
        drawDetails(&grid, state, theme)
        drawStatus(&grid, state, theme)
        if let events = layout.events { drawEvents(&grid, state, events) }
        switch state.mode {
        case .browsing, .searching: break
        case .editing(let form): drawForm(&grid, form, state, theme)
        case .confirmingDelete(let row): drawDeleteQuestion(&grid, row, state, theme)
        case .confirmingMerge(let group): drawMergeQuestion(&grid, group, state, theme)
        case .deletingData(let prompt): drawDeleteDataPrompt(&grid, prompt, state, theme)
        case .help(let scroll): drawHelp(&grid, scroll: scroll, state, theme)
        case .books(let panel): drawBooks(&grid, panel, state, theme)
        case .conflicts(let panel): drawConflicts(&grid, panel, state, theme)
        }
        drawBottomBar(&grid, state, theme)
        return grid
    }

    // MARK: Frames

    /// Writes `title` into a border row, `┌─ Title ───┐`, and `right` near its right end.
    static func drawTitle(_ grid: inout CellGrid, _ edge: Rect, _ title: String, right: String? = nil) {
        var available = edge.width - 6
        if let right, right.displayWidth + 3 <= available / 2 {
            grid.put(" \(right) ", row: edge.row, column: edge.endColumn - 4 - right.displayWidth, style: Theme.muted)
            available -= right.displayWidth + 3
        }
        guard available > 0 else { return }
        grid.put(" \(title.truncated(toWidth: available)) ", row: edge.row, column: edge.column + 2, style: Theme.title)
    }

    /// Blanks `rect` and draws a titled box around it, for an overlay.
    static func drawOverlayBox(
        _ grid: inout CellGrid, _ rect: Rect, title: String, right: String? = nil, _ theme: Theme
    ) {
        grid.fill(rect)
        grid.drawBox(rect, borders: theme.borders, style: Theme.key)
        drawTitle(&grid, Rect(row: rect.row, column: rect.column, width: rect.width, height: 1), title, right: right)
    }

    /// A rectangle `width` × `height` (clamped to `area`) in the middle of `area`.
    static func centered(width: Int, height: Int, in area: Rect) -> Rect {
        let width = min(width, area.width)
        let height = min(height, area.height)
        return Rect(
            row: area.row + (area.height - height) / 2, column: area.column + (area.width - width) / 2, width: width,
            height: height)
    }

    // MARK: Bottom bar

    private static func drawBottomBar(_ grid: inout CellGrid, _ state: AppState, _ theme: Theme) {
        let bar = state.layout.hintBar
        let unicode = state.unicode
        switch state.mode {
        case .browsing:
            if let message = state.message {
                grid.put(
                    " " + message.text, row: bar.row, column: bar.column, maxWidth: bar.width,
                    style: message.isError ? Theme.error : .plain)
            } else {
                drawHints(&grid, KeyMap.browsing.hints(unicode: unicode), in: bar)
            }
        case .searching:
            let prompt = "/"
            var column = bar.column + 1
            column += grid.put(prompt, row: bar.row, column: column, style: Theme.key)
            let fieldWidth = max(1, min(bar.width / 2, bar.width - 3))
            let (shown, cursor) = state.searchInput.visible(width: fieldWidth)
            grid.put(shown, row: bar.row, column: column, maxWidth: fieldWidth)
            grid.restyle(Rect(row: bar.row, column: column + cursor, width: 1, height: 1), style: Theme.cursor)
            let after = column + max(shown.displayWidth, cursor + 1) + 2
            drawHints(
                &grid, KeyMap.searching.hints(unicode: unicode),
                in: Rect(row: bar.row, column: after, width: bar.endColumn - after, height: 1))
        case .editing:
            drawHints(&grid, KeyMap.form.hints(unicode: unicode), in: bar)
        case .confirmingDelete:
            drawHints(&grid, KeyMap.confirmDelete.hints(unicode: unicode), in: bar)
        case .confirmingMerge:
            drawHints(&grid, KeyMap.confirmMerge.hints(unicode: unicode), in: bar)
        case .deletingData:
            drawHints(&grid, KeyMap.deleteDataPrompt.hints(unicode: unicode), in: bar)
        case .help:
            drawHints(&grid, KeyMap.help.hints(unicode: unicode), in: bar)
        case .books(let panel):
            let hints =
                switch panel.step {
                case .choosing: KeyMap.books.hints(unicode: unicode)
                case .confirmingRemoval: KeyMap.confirmBookRemoval.hints(unicode: unicode)
                case .typing: KeyMap.bookPrompt.hints(unicode: unicode)
                }
            drawHints(&grid, hints, in: bar)
        case .conflicts:
            drawHints(&grid, KeyMap.conflicts.hints(unicode: unicode), in: bar)
        }
    }

    /// Draws as many hints as fit, the most important first, in their table order: ` a add  e edit  …`.
    static func drawHints(_ grid: inout CellGrid, _ hints: [Hint], in bar: Rect) {
        func width(_ hint: Hint) -> Int { hint.key.displayWidth + 1 + hint.text.displayWidth + 2 }
        var budget = bar.width - 1
        var kept = Set<Int>()
        for (index, hint) in hints.enumerated().sorted(by: {
            ($0.element.priority, $0.offset) < ($1.element.priority, $1.offset)
        }) {
            guard width(hint) <= budget else { continue }
            budget -= width(hint)
            kept.insert(index)
        }
        var column = bar.column + 1
        for (index, hint) in hints.enumerated() where kept.contains(index) {
            column += grid.put(
                hint.key, row: bar.row, column: column, maxWidth: bar.endColumn - column, style: Theme.key)
            column += grid.put(" " + hint.text + "  ", row: bar.row, column: column, maxWidth: bar.endColumn - column)
        }
    }

    // MARK: Too small

    private static func drawTooSmall(_ grid: inout CellGrid) {
        let lines = [
            "Terminal too small: \(grid.width)x\(grid.height).",
            "Make it at least \(Layout.minimumWidth)x\(Layout.minimumHeight),",
            "or press q to quit.",
        ]
        let top = max(0, (grid.height - lines.count) / 2)
        for (offset, line) in lines.enumerated() {
            let wrapped = line.truncated(toWidth: grid.width)
            grid.put(wrapped, row: top + offset, column: max(0, (grid.width - wrapped.displayWidth) / 2))
        }
    }
}
