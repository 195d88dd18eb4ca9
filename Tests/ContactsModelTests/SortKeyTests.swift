import Foundation
import Testing

@testable import ContactsModel

@Suite("The list's sort key")
struct SortKeyTests {
    private func folded(_ name: String) -> String {
        name.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    @Test("ASCII names take the fast path and fold exactly as Foundation folds them")
    func asciiMatchesFoundation() {
        let every = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
        #expect(Contact.sortKey(every) == folded(every))
        for name in ["Ada Lovelace", "ADA LOVELACE", "O'Brien-Smith, Jr.", "", "Zoe 42 @home"] {
            #expect(Contact.sortKey(name) == folded(name), "\(name)")
        }
    }

    @Test("other names fold case, accents and width away")
    func otherNames() {
        #expect(Contact.sortKey("Ángel") == "angel")
        #expect(Contact.sortKey("Zoë") == "zoe")
        #expect(Contact.sortKey("ＡＢＣ") == "abc")
    }

    private func sorted(_ names: [String]) -> [String] {
        names.sorted { (Contact.sortKey($0), $0) < (Contact.sortKey($1), $1) }
    }

    @Test("Polish, German, Danish and Norwegian letters of their own sort with the letter people type for them")
    func ownLetters() {
        #expect(sorted(["Zoe", "Łukasz", "Lucy", "Marek", "Ludwik"]) == ["Lucy", "Ludwik", "Łukasz", "Marek", "Zoe"])
        #expect(
            sorted(["Strauss", "Straße", "Strasser", "Ärger", "Zander", "Abel"]) == [
                "Abel", "Ärger", "Straße", "Strasser", "Strauss", "Zander",
            ])
        #expect(sorted(["Søren", "Sørensen", "Sophie", "Tove"]) == ["Sophie", "Søren", "Sørensen", "Tove"])
        #expect(Contact.sortKey("Æsa Ødegård") == "aesa odegard")
    }

    @Test("Swedish å, ä and ö sort with a and o, as the root collation does (not after z, as Swedish does)")
    func swedish() {
        #expect(sorted(["Örjan", "Åsa", "Zlatan", "Anders", "Olle"]) == ["Anders", "Åsa", "Olle", "Örjan", "Zlatan"])
    }

    @Test(
        "Japanese: katakana sorts with the hiragana of the same sound, half-width with full-width; Hangul in jamo order"
    )
    func japaneseAndHangul() {
        #expect(Contact.sortKey("サトウ") == Contact.sortKey("さとう"))
        #expect(Contact.sortKey("ｻﾄｳ") == Contact.sortKey("さとう"))
        #expect(sorted(["タナカ", "さとう", "すずき"]) == ["さとう", "すずき", "タナカ"])
        #expect(sorted(["박지민", "김민준", "이서연", "강하늘"]) == ["강하늘", "김민준", "박지민", "이서연"])
    }

    @Test("a name's key is its letters' keys, one after another, exactly as Foundation folds the whole name")
    func letterByLetter() {
        // A sample of the letters that fold alone, each beside a few others, and ASCII.
        let ranges: [ClosedRange<UInt32>] = [
            0x80...0x2AF, 0x370...0x482, 0x48A...0x52F, 0x1E00...0x1FFF, 0x2000...0x200B, 0x200D...0x206F,
            0x2100...0x2BFF, 0x3040...0x3098, 0x309B...0x30FF, 0x4E00...0x9FFF, 0xAC00...0xD7A3, 0xFF00...0xFF9D,
            0xFFA0...0xFFEF, 0x1F000...0x1F3FA, 0x1F400...0x1FAFF,
        ]
        let letters = ranges.flatMap { range in stride(from: range.lowerBound, through: range.upperBound, by: 13) }
            .compactMap(Unicode.Scalar.init)
        #expect(letters.allSatisfy(ScalarKeys.foldsAlone))
        let partners: [Unicode.Scalar] = ["a", "Z", " ", "-", "ß", "Ø", "É", "ｶ", "カ", "한", "Σ", "ς", "≠", "K", "🎂"]
        var differing: [String] = []
        for letter in letters {
            for partner in partners {
                for name in [String(letter) + String(partner), String(partner) + String(letter)] {
                    if Contact.sortKey(name) != Contact.foldedSortKey(name) { differing.append(name) }
                }
            }
        }
        #expect(differing.isEmpty, "\(differing.prefix(10))")
    }

    @Test("a name with a mark that folds into the letter before it is folded whole")
    func combiningMarks() {
        for name in ["Jose\u{301}", "Zoe\u{308} Mu\u{308}ller", "ｶﾞｷ", "か\u{3099}", "Ann\u{200C}a", "👍\u{1F3FD}"] {
            #expect(Contact.sortKey(name) == Contact.foldedSortKey(name), "\(name)")
        }
        #expect(Contact.sortKey("Jose\u{301}") == Contact.sortKey("José"))
    }
}
