import ContactsCore
import Foundation
import Testing

@Suite("The list's sort key")
struct SortKeyTests {
    private func folded(_ name: String) -> String {
        name.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    @Test("ASCII names take the fast path and fold exactly as Foundation folds them")
    func asciiMatchesFoundation() {
        let every = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
        #expect(ContactStore.sortKey(every) == folded(every))
        for name in ["Ada Lovelace", "ADA LOVELACE", "O'Brien-Smith, Jr.", "", "Zoe 42 @home"] {
            #expect(ContactStore.sortKey(name) == folded(name), "\(name)")
        }
    }

    @Test("other names fold case, accents and width away")
    func otherNames() {
        #expect(ContactStore.sortKey("Ángel") == "angel")
        #expect(ContactStore.sortKey("Zoë") == "zoe")
        #expect(ContactStore.sortKey("ＡＢＣ") == "abc")
    }

    private func sorted(_ names: [String]) -> [String] {
        names.sorted { (ContactStore.sortKey($0), $0) < (ContactStore.sortKey($1), $1) }
    }

    @Test("Polish, German, Danish and Norwegian letters of their own sort with the letter people type for them")
    func ownLetters() {
        #expect(sorted(["Zoe", "Łukasz", "Lucy", "Marek", "Ludwik"]) == ["Lucy", "Ludwik", "Łukasz", "Marek", "Zoe"])
        #expect(
            sorted(["Strauss", "Straße", "Strasser", "Ärger", "Zander", "Abel"]) == [
                "Abel", "Ärger", "Straße", "Strasser", "Strauss", "Zander",
            ])
        #expect(sorted(["Søren", "Sørensen", "Sophie", "Tove"]) == ["Sophie", "Søren", "Sørensen", "Tove"])
        #expect(ContactStore.sortKey("Æsa Ødegård") == "aesa odegard")
    }

    @Test("Swedish å, ä and ö sort with a and o, as the root collation does (not after z, as Swedish does)")
    func swedish() {
        #expect(sorted(["Örjan", "Åsa", "Zlatan", "Anders", "Olle"]) == ["Anders", "Åsa", "Olle", "Örjan", "Zlatan"])
    }

    @Test(
        "Japanese: katakana sorts with the hiragana of the same sound, half-width with full-width; Hangul in jamo order"
    )
    func japaneseAndHangul() {
        #expect(ContactStore.sortKey("サトウ") == ContactStore.sortKey("さとう"))
        #expect(ContactStore.sortKey("ｻﾄｳ") == ContactStore.sortKey("さとう"))
        #expect(sorted(["タナカ", "さとう", "すずき"]) == ["さとう", "すずき", "タナカ"])
        #expect(sorted(["박지민", "김민준", "이서연", "강하늘"]) == ["강하늘", "김민준", "박지민", "이서연"])
    }
}
