import ContactsModel
import ContactsStore

extension String {
    /// This text for a terminal that is not in a UTF-8 locale: ``terminalSafe``, then every non-ASCII grapheme
    /// becomes `?`, except the symbols this module draws itself (box drawing, `…`, `↵`, arrows), which become
    /// their ASCII look-alikes.
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
}
