/// A rectangle of cells: the top-left cell and a size. Width and height are never negative.
public struct Rect: Sendable, Hashable {
    /// The top row.
    public var row: Int
    /// The leftmost column.
    public var column: Int
    /// The number of columns.
    public var width: Int
    /// The number of rows.
    public var height: Int

    /// A rectangle at `row`, `column`; a negative width or height is taken as 0.
    public init(row: Int, column: Int, width: Int, height: Int) {
        self.row = row
        self.column = column
        self.width = max(0, width)
        self.height = max(0, height)
    }

    /// The row just below the rectangle.
    public var endRow: Int { row + height }
    /// The column just right of the rectangle.
    public var endColumn: Int { column + width }
    /// Whether the rectangle has no cells.
    public var isEmpty: Bool { width == 0 || height == 0 }

    /// Whether the cell at `row`, `column` is inside.
    public func contains(row: Int, column: Int) -> Bool {
        (self.row..<endRow).contains(row) && (self.column..<endColumn).contains(column)
    }

    /// The cells that are in both rectangles (empty, at this rectangle's origin, when there are none).
    public func intersection(_ other: Rect) -> Rect {
        let top = max(row, other.row)
        let left = max(column, other.column)
        let bottom = min(endRow, other.endRow)
        let right = min(endColumn, other.endColumn)
        guard bottom > top, right > left else { return Rect(row: row, column: column, width: 0, height: 0) }
        return Rect(row: top, column: left, width: right - left, height: bottom - top)
    }

    /// The rectangle shrunk by `amount` cells on every side, as for the inside of a box.
    public func inset(by amount: Int) -> Rect {
        inset(top: amount, left: amount, bottom: amount, right: amount)
    }

    /// The rectangle shrunk by the given number of cells on each side.
    public func inset(top: Int = 0, left: Int = 0, bottom: Int = 0, right: Int = 0) -> Rect {
        Rect(row: row + top, column: column + left, width: width - left - right, height: height - top - bottom)
    }

    /// Side by side: the first `leftWidth` columns (clamped to the width), and the rest.
    public func split(leftWidth: Int) -> (left: Rect, right: Rect) {
        let left = min(max(0, leftWidth), width)
        return (
            Rect(row: row, column: column, width: left, height: height),
            Rect(row: row, column: column + left, width: width - left, height: height)
        )
    }

    /// Side by side: the last `rightWidth` columns (clamped to the width), and what is left of them.
    public func split(rightWidth: Int) -> (left: Rect, right: Rect) {
        split(leftWidth: width - min(max(0, rightWidth), width))
    }

    /// One above the other: the first `topHeight` rows (clamped to the height), and the rest.
    public func split(topHeight: Int) -> (top: Rect, bottom: Rect) {
        let top = min(max(0, topHeight), height)
        return (
            Rect(row: row, column: column, width: width, height: top),
            Rect(row: row + top, column: column, width: width, height: height - top)
        )
    }

    /// One above the other: the last `bottomHeight` rows (clamped to the height), and what is above them;
    /// `split(bottomHeight: 1)` makes a status line.
    public func split(bottomHeight: Int) -> (top: Rect, bottom: Rect) {
        split(topHeight: height - min(max(0, bottomHeight), height))
    }
}
