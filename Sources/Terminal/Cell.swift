/// One column of a ``CellGrid``.
///
/// A grapheme wider than one column sits in its first cell; each further column it covers is a continuation
/// cell, whose ``grapheme`` is empty.
public struct Cell: Sendable, Hashable {
    /// The grapheme shown in this column, already made safe by ``Swift/String/terminalSafe``; `" "` when blank,
    /// `""` for a continuation cell.
    public var grapheme: String
    /// How the column is drawn.
    public var style: CellStyle

    /// A cell showing `grapheme` in `style`.
    public init(grapheme: String, style: CellStyle = .plain) {
        self.grapheme = grapheme
        self.style = style
    }

    /// A blank column.
    public static let blank = Cell(grapheme: " ")

    /// Whether this column is covered by the wide grapheme in a cell to its left.
    public var isContinuation: Bool { grapheme.isEmpty }
}
