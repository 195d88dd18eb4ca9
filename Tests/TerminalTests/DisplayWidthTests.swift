import ContactsModel
import Testing

@testable import Terminal

@Suite("Display width: how many columns a contact's name takes")
struct DisplayWidthTests {
    @Test(
        "a name takes the columns a terminal gives it",
        arguments: [
            ("Grace Hopper", 12),
            ("张伟", 4),
            ("Zo\u{EB}", 3),
            ("Zoe\u{308}", 3),
            ("e\u{301}", 1),
            ("김민준", 6),
            ("さくら", 6),
            ("ＡＢ", 4),
            ("Ελένη", 5),
            ("Андрей", 6),
            ("👩‍👩‍👧", 2),
            ("🇫🇷", 2),
            ("❤️", 2),
            ("1️⃣", 2),
            ("👍🏽", 2),
            ("👍", 2),
            ("\u{1F1EB}", 1),
            ("\u{1100}\u{1161}", 2),
            ("कि", 2),
            ("a\u{200B}b", 2),
            ("", 0),
        ]
    )
    func nameWidth(name: String, columns: Int) {
        #expect(name.displayWidth == columns)
    }

    @Test(
        "a control character is as wide as the escape shown in its place",
        arguments: [
            ("\t", 1),
            ("\u{1B}", 2),
            ("\u{7}", 2),
            ("\n", 1),
            ("\r\n", 1),
            ("\u{7F}", 2),
            ("\u{9B}", 8),
            ("\u{202E}", 8),
        ]
    )
    func controlWidth(text: String, columns: Int) {
        #expect(text.displayWidth == columns)
        #expect(text.displayWidth == text.terminalSafe.displayWidth)
    }

    @Test("a combining mark alone takes no column, and adds none to its base")
    func combiningMarks() {
        #expect(Character("\u{301}").displayWidth == 0)
        #expect(Character("\u{FE0F}").displayWidth == 0)
        #expect(Character("\u{200D}").displayWidth == 0)
        #expect(Character("张\u{301}").displayWidth == 2)
    }

    @Test("a long name is cut to fit, ending in an ellipsis")
    func truncationExamples() {
        #expect("Grace Hopper".truncated(toWidth: 6) == "Grace…")
        #expect("Grace Hopper".truncated(toWidth: 6, ellipsis: false) == "Grace ")
        #expect("Grace".truncated(toWidth: 5) == "Grace")
        #expect("张伟".truncated(toWidth: 3, ellipsis: false) == "张 ")
        #expect("张伟".truncated(toWidth: 3) == "张…")
        #expect("张伟".truncated(toWidth: 2) == " …")
        #expect("张伟".truncated(toWidth: 1) == "…")
        #expect("张伟".truncated(toWidth: 0) == "")
        #expect("Zoe\u{308}y".truncated(toWidth: 3, ellipsis: false) == "Zoe\u{308}")
        #expect("👩‍👩‍👧👩‍👩‍👧".truncated(toWidth: 3, ellipsis: false) == "👩‍👩‍👧 ")
    }

    static let truncationSamples = [
        "Grace Hopper", "张伟", "王小明 Wang", "Zoe\u{308} Saldan\u{303}a", "김민준", "👩‍👩‍👧 family", "🇫🇷🇩🇪🇯🇵",
        "a张b伟c", "Eve\u{1B}[2J", "e\u{301}e\u{301}e\u{301}", "ＡＢＣ", "",
    ]

    @Test("cutting never splits a grapheme and never exceeds the width", arguments: truncationSamples, 0...13)
    func truncationInvariants(text: String, width: Int) {
        for ellipsis in [true, false] {
            let cut = text.truncated(toWidth: width, ellipsis: ellipsis)
            #expect(cut.displayWidth <= width)
            if text.displayWidth <= width {
                #expect(cut == text)
                continue
            }
            #expect(cut.displayWidth == width, "a cut text fills its column exactly")
            var kept = Substring(cut)
            if ellipsis && width > 0 {
                #expect(kept.last == "…")
                kept = kept.dropLast()
            }
            while kept.last == " " {
                kept = kept.dropLast()
            }
            #expect(Array(text).starts(with: Array(kept)), "whole graphemes of the name, in order")
        }
    }

    @Test("padding fills a column to a width, counting wide characters twice")
    func padding() {
        #expect("张伟".padded(toWidth: 6) == "张伟  ")
        #expect("Zo\u{EB}".padded(toWidth: 4) == "Zo\u{EB} ")
        #expect("Grace Hopper".padded(toWidth: 4) == "Grace Hopper")
    }
}
