import Terminal

/// The help overlay's lines and frame, generated from ``KeyMap``; shared by the renderer, which draws it, and
/// the key handler, which scrolls it.
struct HelpOverlay {
    enum Line: Equatable {
        case heading(String)
        case entry(keys: String, help: String)
        case blank
    }

    /// Where the overlay goes.
    let frame: Rect
    /// Every line, before scrolling.
    let lines: [Line]

    init(layout: Layout, unicode: Bool) {
        frame = Renderer.centered(width: 80, height: layout.body.height, in: layout.body)
        let sections = KeyMap.helpSections(unicode: unicode)
        let inner = frame.width - 4
        let keysWidth = min(16, sections.flatMap(\.entries).map { $0.keys.displayWidth }.max() ?? 0)
        var lines: [Line] = []
        for section in sections {
            if !lines.isEmpty { lines.append(.blank) }
            lines.append(.heading(section.title))
            for entry in section.entries {
                let wrapped = TextFormatting.wrap(entry.help, width: max(1, inner - keysWidth - 2))
                for (offset, text) in wrapped.enumerated() {
                    lines.append(.entry(keys: offset == 0 ? entry.keys.padded(toWidth: keysWidth) : "", help: text))
                }
            }
        }
        self.lines = lines
        self.keysWidth = keysWidth
    }

    /// The width of the keys column.
    let keysWidth: Int

    /// How many lines fit inside the frame.
    var visibleLines: Int { max(0, frame.height - 2) }

    /// The largest useful scroll.
    var maximumScroll: Int { max(0, lines.count - visibleLines) }
}
