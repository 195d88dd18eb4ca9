import ContactsModel
import Testing

@Suite("Terminal-safe text: the one escaping of synced text for a terminal, used by every program")
struct TerminalTextTests {
    @Test(
        "controls, bidi overrides, isolates and marks are shown as readable escapes",
        arguments: [
            ("Eve\u{1B}[2J", "Eve^[[2J"),
            ("a\u{7}b", "a^Gb"),
            ("\u{0}", "^@"),
            ("\u{7F}", "^?"),
            ("\u{9B}31m", "<U+009B>31m"),
            ("next\u{85}line", "next<U+0085>line"),
            ("abc\u{202E}exe", "abc<U+202E>exe"),
            ("\u{202A}\u{202B}\u{202C}\u{202D}", "<U+202A><U+202B><U+202C><U+202D>"),
            ("\u{2066}\u{2067}\u{2068}\u{2069}", "<U+2066><U+2067><U+2068><U+2069>"),
            ("left\u{200E}right\u{200F}", "left<U+200E>right<U+200F>"),
            ("arabic\u{061C}mark", "arabic<U+061C>mark"),
            ("a\r\nb\nc\rd", "a↵b↵c↵d"),
            ("\u{2028}\u{2029}", "↵↵"),
            ("a\tb", "a b"),
        ]
    )
    func escapes(raw: String, shown: String) {
        #expect(raw.terminalSafe == shown)
    }

    @Test("names in any script, with accents, joiners and emoji, are unchanged")
    func printableTextUnchanged() {
        // U+200D (the joiner of emoji sequences) and U+200C are not bidi controls: kept.
        let names = "张伟 김민준 Zoe\u{308} Zo\u{EB} Ελένη Андрей עדן مرحبا 👩‍👩‍👧 🇫🇷 ❤️ O'Brien <b> می\u{200C}خواهم"
        #expect(names.terminalSafe == names)
    }

    @Test("the result holds nothing a terminal acts on, whatever the input")
    func everyScalarBelow0x3000() {
        var all = String.UnicodeScalarView()
        for value in 0..<0x3000 where !(0xD800...0xDFFF).contains(value) {
            all.append(Unicode.Scalar(UInt32(value))!)
        }
        for scalar in String(all).terminalSafe.unicodeScalars {
            // Independent of the implementation: not a control character (Cc) and not a bidi formatting character.
            #expect(scalar.properties.generalCategory != .control, "U+\(String(scalar.value, radix: 16))")
            #expect(!scalar.properties.isBidiControl, "U+\(String(scalar.value, radix: 16))")
        }
    }
}
