import Terminal

/// The symbols and styles the screen is drawn with, in Unicode or in plain ASCII for a terminal whose locale
/// is not UTF-8. Colours are roles (``ColorRole``), which `NO_COLOR` turns off in ``CursesTerminal``.
struct Theme: Sendable {
    let borders: BorderSet
    /// Marks the selected row and the focused field.
    let pointer: String
    let idle: String
    let syncing: String
    let failed: String
    let separator: String
    /// After the name of a contact with a photo.
    let photo: String

    static let unicode = Theme(
        borders: .unicode, pointer: "›", idle: "●", syncing: "↻", failed: "✖", separator: "·", photo: "▣")
    static let ascii = Theme(
        borders: .ascii, pointer: ">", idle: "*", syncing: "~", failed: "x", separator: "-", photo: "#")

    static func forTerminal(unicode: Bool) -> Theme { unicode ? .unicode : .ascii }

    static let border = CellStyle(color: .muted)
    static let title = CellStyle(color: .accent, bold: true)
    static let label = CellStyle(color: .muted)
    static let selected = CellStyle(bold: true, reverse: true)
    static let cursor = CellStyle(reverse: true)
    static let key = CellStyle(color: .accent, bold: true)
    static let error = CellStyle(color: .error, bold: true)
    static let ok = CellStyle(color: .ok)
    static let busy = CellStyle(color: .warning, bold: true)
    static let muted = CellStyle(color: .muted)
    static let heading = CellStyle(color: .accent, bold: true)
}
