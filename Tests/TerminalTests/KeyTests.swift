import CNcursesw
import Testing

@testable import Terminal

@Suite("Keys: what wget_wch reports, decoded")
struct KeyTests {
    @Test(
        "keypad keys reported with KEY_CODE_YES",
        arguments: [
            (cnc_key_up(), Key.up),
            (cnc_key_down(), .down),
            (cnc_key_left(), .left),
            (cnc_key_right(), .right),
            (cnc_key_home(), .home),
            (cnc_key_end(), .end),
            (cnc_key_ppage(), .pageUp),
            (cnc_key_npage(), .pageDown),
            (cnc_key_btab(), .backTab),
            (cnc_key_backspace(), .backspace),
            (cnc_key_dc(), .delete),
            (cnc_key_enter(), .enter),
            (cnc_key_resize(), .resize),
            (cnc_key_f(1), .function(1)),
            (cnc_key_f(12), .function(12)),
            (cnc_key_f(63), .function(63)),
        ]
    )
    func functionKeys(code: Int32, key: Key) {
        #expect(Key(cursesCode: code, isFunctionKey: true) == key)
    }

    @Test(
        "characters, and the control bytes terminals send for editing keys",
        arguments: [
            (127, Key.backspace),
            (8, .backspace),
            (10, .enter),
            (13, .enter),
            (9, .tab),
            (27, .escape),
            (3, .control("c")),
            (1, .control("a")),
            (26, .control("z")),
            (0, .control("@")),
            (31, .control("_")),
            (32, .character(" ")),
            (97, .character("a")),
            (0xE9, .character("é")),
            (0x5F20, .character("张")),
            (0x1F600, .character("😀")),
        ] as [(Int32, Key)]
    )
    func characters(code: Int32, key: Key) {
        #expect(Key(cursesCode: code, isFunctionKey: false) == key)
    }

    @Test("codes that are no key this app knows decode to nil")
    func unknownCodes() {
        #expect(Key(cursesCode: cnc_key_f0(), isFunctionKey: true) == nil)
        #expect(Key(cursesCode: cnc_key_f(cnc_key_f_count()), isFunctionKey: true) == nil)
        #expect(Key(cursesCode: 0x9B, isFunctionKey: false) == nil)
        #expect(Key(cursesCode: 0xD800, isFunctionKey: false) == nil)
        #expect(Key(cursesCode: 0x110000, isFunctionKey: false) == nil)
        #expect(Key(cursesCode: -1, isFunctionKey: false) == nil)
    }

    @Test(
        "a help screen names keys the way people read them",
        arguments: [
            (Key.up, "↑", "Up"),
            (.down, "↓", "Down"),
            (.left, "←", "Left"),
            (.right, "→", "Right"),
            (.pageUp, "PgUp", "PgUp"),
            (.pageDown, "PgDn", "PgDn"),
            (.enter, "Enter", "Enter"),
            (.escape, "Esc", "Esc"),
            (.backTab, "Shift-Tab", "Shift-Tab"),
            (.control("c"), "Ctrl-C", "Ctrl-C"),
            (.function(5), "F5", "F5"),
            (.character(" "), "Space", "Space"),
            (.character("/"), "/", "/"),
            (.character("\u{1B}"), "^[", "^["),
        ]
    )
    func descriptions(key: Key, unicode: String, ascii: String) {
        #expect(key.description == unicode)
        #expect(key.description(unicode: false) == ascii)
    }
}
