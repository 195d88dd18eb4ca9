/// What a piece of text means, which the terminal turns into a colour (or, without colour, into nothing).
///
/// Screens choose roles, never colours, so that `NO_COLOR` and monochrome terminals still work.
public enum ColorRole: Sendable, Hashable, CaseIterable {
    /// The terminal's own foreground colour.
    case normal
    /// Headings, the focused pane's title, key names in a help line.
    case accent
    /// Failures the user must act on.
    case error
    /// Success: synced, saved.
    case ok
    /// Something to notice that is not a failure: offline, a conflict resolved.
    case warning
    /// Secondary text: timestamps, hints, placeholders.
    case muted
}

/// How a cell is drawn: attributes and a colour role.
public struct CellStyle: Sendable, Hashable {
    /// The colour role; ``ColorRole/normal`` keeps the terminal's colours.
    public var color: ColorRole
    /// Bold (often also brighter).
    public var bold: Bool
    /// Foreground and background swapped: the usual selection bar.
    public var reverse: Bool
    /// Dimmed, for text that matters less.
    public var dim: Bool
    /// Underlined.
    public var underline: Bool

    /// A style with the given role and attributes; everything defaults to off.
    public init(
        color: ColorRole = .normal,
        bold: Bool = false,
        reverse: Bool = false,
        dim: Bool = false,
        underline: Bool = false
    ) {
        self.color = color
        self.bold = bold
        self.reverse = reverse
        self.dim = dim
        self.underline = underline
    }

    /// No attributes, the terminal's colours.
    public static let plain = CellStyle()
}
