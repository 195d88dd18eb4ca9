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
}
