/// The one place that decides which text a terminal would act on, and what is shown instead: the app's
/// screen, its commands' output and messages, and its JSON output all go through the functions here.
extension String {
    /// This text with everything a terminal would act on replaced by a visible escape, so that text from a
    /// server, a file or another device is displayed and never interpreted. The full-screen app draws through
    /// it, and every command prints synced text through it.
    ///
    /// | Input | Shown as |
    /// | --- | --- |
    /// | line feed, carriage return, CR LF, U+2028, U+2029 | `↵` (one per line break) |
    /// | tab | one space |
    /// | other C0 controls U+0000–U+001F | caret notation: ESC is `^[`, BEL is `^G` |
    /// | DEL | `^?` |
    /// | C1 controls U+0080–U+009F (CSI is U+009B) | `<U+009B>` |
    /// | bidi embeddings, overrides and isolates U+202A–U+202E, U+2066–U+2069 | `<U+202E>` |
    /// | bidi marks U+200E, U+200F, U+061C | `<U+200F>` |
    ///
    /// An escape sequence such as `ESC [ 2 J` therefore reads `^[[2J`: its introducer is defused and the rest is
    /// plain text. The result holds no tab and no line break, so it can be a field of a tab-separated line.
    /// Everything else, including combining marks and emoji, is kept.
    public var terminalSafe: String {
        guard unicodeScalars.contains(where: \.needsTerminalEscape) else { return self }
        var result = String.UnicodeScalarView()
        var previous: Unicode.Scalar?
        for scalar in unicodeScalars {
            defer { previous = scalar }
            guard scalar.needsTerminalEscape else {
                result.append(scalar)
                continue
            }
            // CR LF is one line break, not two.
            if scalar == "\n" && previous == "\r" { continue }
            result.append(contentsOf: scalar.terminalEscape.unicodeScalars)
        }
        return String(result)
    }

    /// Input echoed back in a message: ``terminalSafe``, and cut at 80 characters.
    public var terminalSafeForMessages: String {
        let result = terminalSafe
        return result.count > 80 ? String(result.prefix(80)) + "…" : result
    }

    /// This text for a terminal that is not in a UTF-8 locale: ``terminalSafe``, then every non-ASCII grapheme
    /// becomes `?`, except the symbols the full-screen app draws itself (box drawing, `…`, `↵`, arrows), which
    /// become their ASCII look-alikes.
    public var asciiSafe: String {
        var result = ""
        for character in terminalSafe {
            if character.isASCII {
                result.append(character)
            } else {
                result.append(Self.asciiLookAlikes[character] ?? "?")
            }
        }
        return result
    }

    /// One column each, like the symbols they replace, so that an ASCII screen keeps the Unicode layout.
    private static let asciiLookAlikes: [Character: Character] = [
        "─": "-", "│": "|", "┌": "+", "┐": "+", "└": "+", "┘": "+", "├": "+", "┤": "+", "┬": "+", "┴": "+",
        "┼": "+", "…": "~", "↵": "$", "↑": "^", "↓": "v", "←": "<", "→": ">", "•": "*", "·": ".",
    ]

    /// This JSON text with DEL, C1 controls, line separators and bidi controls written as `\uXXXX` escapes, as
    /// JSON allows: a reader gets the exact text back, and a terminal the JSON is printed on acts on none of
    /// them. (A JSON encoder escapes C0 controls itself; outside strings, JSON has only ASCII.)
    public var terminalSafeJSON: String {
        guard unicodeScalars.contains(where: { $0.value >= 0x7F && $0.needsTerminalEscape }) else { return self }
        var result = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            guard scalar.value >= 0x7F, scalar.needsTerminalEscape else {
                result.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            result.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
        }
        return String(result)
    }
}

extension Unicode.Scalar {
    /// Whether a terminal could act on this scalar (or, for bidi controls and marks, reorder the text around
    /// it so that what is shown is not what is there).
    public var needsTerminalEscape: Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E...0x200F, 0x2028...0x2029, 0x202A...0x202E, 0x2066...0x2069:
            return true
        default:
            return false
        }
    }

    /// The visible text shown in place of a scalar for which ``needsTerminalEscape`` is true.
    public var terminalEscape: String {
        switch value {
        case 0x0A, 0x0D, 0x2028, 0x2029:
            return "↵"
        case 0x09:
            return " "
        case 0x00...0x1F:
            return "^" + String(Character(Unicode.Scalar(UInt8(value) + 0x40)))
        case 0x7F:
            return "^?"
        default:
            let hex = String(value, radix: 16, uppercase: true)
            return "<U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + ">"
        }
    }
}
