import ContactsModel

/// A screen's worth of cells in memory: screens render into it, tests read it as ``text``, and
/// ``CursesTerminal`` copies it to the terminal.
///
/// Everything written is first made safe with ``Swift/String/terminalSafe``, and every write keeps the grid
/// consistent: a grapheme `n` columns wide is followed by `n - 1` continuation cells, and writing over any part
/// of a wide grapheme blanks the rest of it.
public struct CellGrid: Sendable, Equatable {
    /// The number of columns.
    public let width: Int
    /// The number of rows.
    public let height: Int
    private var cells: [Cell]

    /// A blank grid; a negative size is taken as 0.
    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    /// The whole grid as a rectangle at row 0, column 0.
    public var bounds: Rect { Rect(row: 0, column: 0, width: width, height: height) }

    /// The cell at `row`, `column`, which must be inside the grid.
    public subscript(row: Int, column: Int) -> Cell {
        precondition(bounds.contains(row: row, column: column), "cell \(row),\(column) is outside \(width)x\(height)")
        return cells[row * width + column]
    }

    /// Writes `text` on `row` from `column` onwards, made safe with ``Swift/String/terminalSafe``.
    ///
    /// The text is clipped at the grid's edges and after `maxWidth` columns; a wide grapheme that would straddle
    /// either limit is replaced by spaces, so nothing is ever drawn outside them. Zero-width graphemes that have
    /// no base to attach to (a lone combining mark, a zero-width space) are dropped.
    ///
    /// - Returns: The number of columns written, so that the next piece of text can follow.
    @discardableResult
    public mutating func put(
        _ text: some StringProtocol,
        row: Int,
        column: Int,
        maxWidth: Int? = nil,
        style: CellStyle = .plain
    ) -> Int {
        guard (0..<height).contains(row) else { return 0 }
        let limit = min(width, maxWidth.map { column + max(0, $0) } ?? width)
        let start = max(0, column)
        var next = column
        for character in String(text).terminalSafe {
            guard next < limit else { break }
            let characterWidth = character.displayWidth
            if characterWidth == 0 { continue }
            if next < 0 || next + characterWidth > limit {
                // Only part of it is visible: show blanks there rather than half a grapheme.
                let visible = max(0, next)
                for blankColumn in visible..<max(visible, min(limit, next + characterWidth)) {
                    write(Cell(grapheme: " ", style: style), row: row, column: blankColumn, width: 1)
                }
            } else {
                write(Cell(grapheme: String(character), style: style), row: row, column: next, width: characterWidth)
            }
            next += characterWidth
        }
        return max(0, min(next, limit) - start)
    }

    /// Blanks every cell of `rect` that is inside the grid, in `style`.
    public mutating func fill(_ rect: Rect, style: CellStyle = .plain) {
        let area = rect.intersection(bounds)
        for row in area.row..<area.endRow {
            for column in area.column..<area.endColumn {
                write(Cell(grapheme: " ", style: style), row: row, column: column, width: 1)
            }
        }
    }

    /// Changes the style of every cell of `rect` that is inside the grid and keeps its text, as for the
    /// selection bar over a list row.
    public mutating func restyle(_ rect: Rect, style: CellStyle) {
        let area = rect.intersection(bounds)
        for row in area.row..<area.endRow {
            for column in area.column..<area.endColumn {
                cells[row * width + column].style = style
            }
        }
    }

    /// Draws the edges of `rect` (the part inside the grid) and, if there is room, `title` in the top edge,
    /// shortened with `…` if need be: `┌─ Title ───┐`. A rectangle less than 2 cells wide or high is left alone.
    public mutating func drawBox(
        _ rect: Rect,
        title: String? = nil,
        borders: BorderSet = .unicode,
        style: CellStyle = .plain
    ) {
        guard rect.width >= 2, rect.height >= 2 else { return }
        let bottom = rect.endRow - 1
        let right = rect.endColumn - 1
        drawHorizontalEdge(
            row: rect.row, from: rect.column, to: right, ends: (borders.topLeft, borders.topRight), borders: borders,
            style: style)
        drawHorizontalEdge(
            row: bottom, from: rect.column, to: right, ends: (borders.bottomLeft, borders.bottomRight),
            borders: borders, style: style)
        for row in (rect.row + 1)..<bottom {
            put(String(borders.vertical), row: row, column: rect.column, style: style)
            put(String(borders.vertical), row: row, column: right, style: style)
        }
        // The title keeps a corner and a line on each side: "┌─ " and " ─┐".
        let titleWidth = rect.width - 6
        if let title, !title.isEmpty, titleWidth > 0 {
            put(" \(title.truncated(toWidth: titleWidth)) ", row: rect.row, column: rect.column + 2, style: style)
        }
    }

    /// Draws a horizontal divider across a box drawn around `rect`, joined to its edges: `├────┤`.
    public mutating func drawDivider(
        _ rect: Rect,
        row: Int,
        borders: BorderSet = .unicode,
        style: CellStyle = .plain
    ) {
        guard rect.width >= 2 else { return }
        drawHorizontalEdge(
            row: row, from: rect.column, to: rect.endColumn - 1, ends: (borders.leftTee, borders.rightTee),
            borders: borders, style: style)
    }

    /// The text of one row, wide graphemes once each, trailing spaces removed.
    public func text(ofRow row: Int) -> String {
        var line = ""
        for column in 0..<width {
            line += self[row, column].grapheme
        }
        while line.last == " " {
            line.removeLast()
        }
        return line
    }

    /// The whole grid as text: rows joined by `"\n"`, trailing spaces removed, styles ignored. This is what
    /// snapshot tests compare.
    public var text: String {
        (0..<height).map { text(ofRow: $0) }.joined(separator: "\n")
    }

    private mutating func drawHorizontalEdge(
        row: Int,
        from left: Int,
        to right: Int,
        ends: (Character, Character),
        borders: BorderSet,
        style: CellStyle
    ) {
        put(String(ends.0), row: row, column: left, style: style)
        let middle = right - left - 1
        if middle > 0 {
            put(String(repeating: borders.horizontal, count: middle), row: row, column: left + 1, style: style)
        }
        put(String(ends.1), row: row, column: right, style: style)
    }

    /// Puts `cell` at `row`, `column` followed by `width - 1` continuation cells, after blanking whatever is
    /// left of any wide grapheme that those columns cut through. The caller keeps all columns inside the grid.
    private mutating func write(_ cell: Cell, row: Int, column: Int, width cellWidth: Int) {
        for covered in column..<(column + cellWidth) {
            breakWideGrapheme(row: row, at: covered)
        }
        cells[row * width + column] = cell
        for continuation in (column + 1)..<(column + cellWidth) {
            cells[row * width + continuation] = Cell(grapheme: "", style: cell.style)
        }
    }

    /// If a grapheme wider than one column covers `column`, replaces all of its columns by blanks that keep
    /// their style.
    private mutating func breakWideGrapheme(row: Int, at column: Int) {
        let base = row * width
        var lead = column
        while lead > 0 && cells[base + lead].isContinuation {
            lead -= 1
        }
        var end = lead + 1
        while end < width && cells[base + end].isContinuation {
            end += 1
        }
        guard end - lead > 1 else { return }
        for index in (base + lead)..<(base + end) {
            cells[index].grapheme = " "
        }
    }
}
