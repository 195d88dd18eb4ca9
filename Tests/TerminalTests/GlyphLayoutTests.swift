import Testing

@testable import Terminal

@Suite("Glyph layout: every grid cell lands on its column whatever the terminal thinks of emoji")
struct GlyphLayoutTests {
    /// Widths as glibc's wcwidth gives them (and tmux 3.3 uses): per scalar, blind to emoji sequences.
    private static func wcwidth(_ scalar: Unicode.Scalar) -> Int {
        if scalar.properties.generalCategory == .control { return -1 }
        if (0x1160...0x11FF).contains(scalar.value) { return 0 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: return EastAsianWidth.isWide(scalar) ? 2 : 1
        }
    }

    private func layout(_ grapheme: String, columns: Int, unicode: Bool = true, capacity: Int = 5) -> [String] {
        GlyphLayout.glyphs(
            for: grapheme,
            columns: columns,
            unicode: unicode,
            capacity: capacity,
            scalarWidth: Self.wcwidth
        )
        .map { "\($0.column):" + String(String.UnicodeScalarView($0.scalars)) }
    }

    @Test("plain, wide and accented graphemes are drawn as they are")
    func plain() {
        #expect(layout("a", columns: 1) == ["0:a"])
        #expect(layout("张", columns: 2) == ["0:张"])
        #expect(layout("e\u{301}", columns: 1) == ["0:e\u{301}"])
        #expect(layout("\u{1100}\u{1161}", columns: 2) == ["0:\u{1100}\u{1161}"])
        #expect(layout("कि", columns: 2) == ["0:क", "1:ि"])
    }

    @Test("an emoji sequence is drawn as its first scalar, padded to the columns the grid gave it")
    func emojiSequences() {
        #expect(layout("❤️", columns: 2) == ["0:❤", "1: "])
        #expect(layout("1️⃣", columns: 2) == ["0:1", "1: "])
        #expect(layout("👩‍👩‍👧", columns: 2) == ["0:👩"])
        #expect(layout("👍🏽", columns: 2) == ["0:👍"])
        #expect(layout("🇫🇷", columns: 2) == ["0:\u{1F1EB}", "1:\u{1F1F7}"], "a flag's letters side by side")
    }

    @Test("without UTF-8, a cell gets an ASCII stand-in of the same width")
    func ascii() {
        #expect(layout("张", columns: 2, unicode: false) == ["0:?", "1: "])
        #expect(layout("─", columns: 1, unicode: false) == ["0:-"])
        #expect(layout("a", columns: 1, unicode: false) == ["0:a"])
    }

    @Test("a character the terminal finds wider than its cell, or unprintable, shows as ?")
    func mismatches() {
        #expect(layout("张", columns: 1) == ["0:?"])
        #expect(layout("\u{85}", columns: 1) == ["0:?"])
    }

    @Test("combining marks beyond what one cchar_t holds are dropped")
    func combiningCapacity() {
        let glyphs = layout("a" + String(repeating: "\u{301}", count: 7), columns: 1, capacity: 5)
        #expect(glyphs == ["0:a" + String(repeating: "\u{301}", count: 4)])
    }
}
