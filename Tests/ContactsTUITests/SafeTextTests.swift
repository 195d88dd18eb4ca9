import Testing

@testable import ContactsTUI

@Suite("Safe text: a contact's fields are displayed, never interpreted by the terminal")
struct SafeTextTests {
    static let hostileNames = [
        "Eve\u{1B}[2J\u{1B}[H",
        "Mallory\u{1B}]52;c;cm0gLXJmIH4=\u{7}",
        "Ring\u{7}\u{7}",
        "\u{9B}31mRed\u{9B}0m",
        "\u{9D}0;title\u{9C}",
        "invoice\u{202E}fdp.exe",
        "\u{2066}Bob\u{2069}",
        "two\r\nlines\nthree",
        "nul\u{0}del\u{7F}",
        "next\u{85}line",
        "\u{1B}P+q\u{1B}\\",
    ]

    @Test(
        "an escape sequence, OSC 52, a bell, C1 CSI or an RTL override in a name never reaches the terminal",
        arguments: hostileNames)
    func hostileNameInGrid(name: String) {
        var grid = CellGrid(width: 60, height: 3)
        grid.put(name, row: 1, column: 2)
        for scalar in grid.text.unicodeScalars {
            #expect(scalar == "\n" || Self.isInert(scalar), "U+\(String(scalar.value, radix: 16)) reached the grid")
        }
        for scalar in name.terminalSafe.unicodeScalars {
            #expect(Self.isInert(scalar))
        }
    }

    /// Independent of the implementation: printable, and not a bidi control.
    private static func isInert(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.properties.generalCategory != .control else { return false }
        return !(0x202A...0x202E).contains(scalar.value) && !(0x2066...0x2069).contains(scalar.value)
    }

    @Test(
        "controls are shown as readable escapes",
        arguments: [
            ("Eve\u{1B}[2J", "Eve^[[2J"),
            ("a\u{7}b", "a^Gb"),
            ("\u{0}", "^@"),
            ("\u{7F}", "^?"),
            ("\u{9B}31m", "<U+009B>31m"),
            ("abc\u{202E}exe", "abc<U+202E>exe"),
            ("\u{2069}", "<U+2069>"),
            ("a\r\nb\nc\rd", "a↵b↵c↵d"),
            ("\u{2028}", "↵"),
            ("a\tb", "a b"),
        ]
    )
    func escapes(raw: String, shown: String) {
        #expect(raw.terminalSafe == shown)
    }

    @Test("names in any script, with accents and emoji, are shown unchanged")
    func printableTextUnchanged() {
        let names = "张伟 김민준 Zoe\u{308} Zo\u{EB} Ελένη Андрей עדן 👩‍👩‍👧 🇫🇷 ❤️ O'Brien <b>"
        #expect(names.terminalSafe == names)
    }

    @Test("a terminal without UTF-8 gets ASCII: question marks for other scripts, look-alikes for lines")
    func asciiFallback() {
        #expect("Zo\u{EB} 张伟".asciiSafe == "Zo? ??")
        #expect("Zoe\u{308}".asciiSafe == "Zo?")
        #expect("┌─┐│└┘├┤".asciiSafe == "+-+|++++")
        #expect("Grace…".asciiSafe == "Grace~")
        #expect("Eve\u{1B}[2J\n".asciiSafe == "Eve^[[2J$")
        #expect("👩‍👩‍👧".asciiSafe == "?")
    }
}
