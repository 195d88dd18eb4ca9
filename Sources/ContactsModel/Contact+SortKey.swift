import Foundation
import Synchronization

extension Contact {
    /// Case- and accent-insensitive, so "Ángel" sorts with "angel" and "Zoë" after "Zoe". Public so that
    /// a search folds what the user types exactly as the store folded the names.
    public static func sortKey(_ name: String) -> String {
        // ASCII folds to its lower case (checked for every ASCII character), without Foundation's
        // folding, which was 5 % of a first download.
        if name.utf8.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: name.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
        }
        // Other names, a letter at a time from the keys of letters seen before (``ScalarKeys``): folding
        // each name through Foundation was a fifth of a first download.
        return ScalarKeys.shared.key(of: name) ?? foldedSortKey(name)
    }

    /// The sort key as Foundation's folding of the whole text makes it: the definition, which
    /// ``sortKey(_:)`` follows letter by letter where it can.
    package static func foldedSortKey(_ name: String) -> String {
        let folded = name.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        // Most accented names fold to ASCII ("José" → "jose"): nothing is left to spell.
        guard folded.utf8.contains(where: { $0 >= 0x80 }) else { return folded }
        var result = ""
        result.unicodeScalars.reserveCapacity(folded.unicodeScalars.count)
        for scalar in folded.unicodeScalars {
            if let spelled = ownLetters[scalar] {
                result += spelled
            } else if (0x30A1...0x30F6).contains(scalar.value), let hiragana = Unicode.Scalar(scalar.value - 0x60) {
                // Katakana sorts with the hiragana of the same sound, as the root collation has it.
                result.unicodeScalars.append(hiragana)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Letters that folding accents leaves alone, because they are letters of their own rather than a letter
    /// with a mark: spelled as the root collation sorts them and as people type them ("Łukasz" with "Lukas",
    /// "Søren" with "Soren", "Straße" with "Strasse").
    private static let ownLetters: [Unicode.Scalar: String] = [
        "ł": "l", "đ": "d", "ø": "o", "ß": "ss", "æ": "ae", "œ": "oe", "ħ": "h", "ı": "i", "þ": "th", "ŀ": "l",
    ]
}

/// The sort key of each letter met so far, kept for the process. In the scripts of ``foldsAlone(_:)``, a
/// text's key is its letters' keys one after another: no letter there folds differently beside another
/// (checked for every pair of them against Foundation, and in `SortKeyTests`). Marks that fold into the
/// letter before them (combining accents, kana sound marks, the zero-width non-joiner) are not among
/// them: a name with one is folded whole.
final class ScalarKeys: Sendable {
    static let shared = ScalarKeys()

    private let keys = Mutex<[UInt32: String]>([:])

    /// The key of `text` from its letters' keys; nil when a letter is outside ``foldsAlone(_:)``.
    func key(of text: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 8)
        let complete = keys.withLock { keys in
            for scalar in text.unicodeScalars {
                if scalar.isASCII {
                    let byte = UInt8(scalar.value)
                    bytes.append((0x41...0x5A).contains(byte) ? byte + 0x20 : byte)
                } else if let key = keys[scalar.value] {
                    bytes += key.utf8
                } else if Self.foldsAlone(scalar) {
                    let key = Contact.foldedSortKey(String(scalar))
                    keys[scalar.value] = key
                    bytes += key.utf8
                } else {
                    return false
                }
            }
            return true
        }
        return complete ? String(decoding: bytes, as: UTF8.self) : nil
    }

    /// Whether `scalar` folds the same wherever it stands: Latin, Greek, Cyrillic (without its combining
    /// marks), general punctuation but the zero-width non-joiner, symbols, kana but the combining sound
    /// marks, CJK ideographs, Hangul syllables, the full- and half-width forms but the half-width sound
    /// marks, and emoji but the skin tone modifiers.
    static func foldsAlone(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x80...0x2AF, 0x370...0x482, 0x48A...0x52F, 0x1E00...0x1FFF, 0x2000...0x200B, 0x200D...0x206F,
            0x2100...0x2BFF, 0x3040...0x3098, 0x309B...0x30FF, 0x4E00...0x9FFF, 0xAC00...0xD7A3, 0xFF00...0xFF9D,
            0xFFA0...0xFFEF, 0x1F000...0x1F3FA, 0x1F400...0x1FAFF:
            true
        default: false
        }
    }
}
