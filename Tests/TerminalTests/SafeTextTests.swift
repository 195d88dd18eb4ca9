import ContactsModel
import Testing

@testable import Terminal

/// The escaping itself is ContactsCore's (``Swift/String/terminalSafe``, tested by TerminalTextTests); these test
/// that the screen goes through it, and the ASCII fallback.
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
        "mark\u{200F}\u{200E}\u{61C}",
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
        scalar.properties.generalCategory != .control && !scalar.properties.isBidiControl
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
