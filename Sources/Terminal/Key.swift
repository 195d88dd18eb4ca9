import CNcursesw
import ContactsModel

/// A key the user pressed, decoded from what curses reports.
public enum Key: Hashable, Sendable {
    /// A printable character, including space.
    case character(Character)
    /// The arrow keys.
    case up, down, left, right
    /// Home and End.
    case home, end
    /// Page Up and Page Down.
    case pageUp, pageDown
    /// Return or Enter (keypad Enter too).
    case enter
    /// Escape on its own (after the escape delay, so not the start of an arrow key's sequence).
    case escape
    /// Tab.
    case tab
    /// Shift-Tab.
    case backTab
    /// Backspace; Ctrl-H arrives as this too, terminals send the same byte.
    case backspace
    /// Delete (forward).
    case delete
    /// The terminal changed size; redraw at ``CursesTerminal/size``.
    case resize
    /// Ctrl with a letter, as its lowercase letter: Ctrl-C is `.control("c")`. Ctrl-I, -J, -M and -H arrive as
    /// ``tab``, ``enter`` and ``backspace``, because terminals send the same bytes.
    case control(Character)
    /// F1 to F63.
    case function(Int)
}

extension Key {
    /// Decodes what `wget_wch` returned: `isFunctionKey` is true when it returned `KEY_CODE_YES`, and `code` is
    /// then a `KEY_*` code, otherwise a character.
    ///
    /// Returns nil for function keys this type does not represent (mouse events, keypad corners) and for codes
    /// that are not Unicode scalars.
    public init?(cursesCode code: Int32, isFunctionKey: Bool) {
        if isFunctionKey {
            guard let key = Self.functionKeys[code] ?? Self.numberedFunctionKey(code) else { return nil }
            self = key
            return
        }
        switch code {
        case 8, 127: self = .backspace
        case 9: self = .tab
        case 10, 13: self = .enter
        case 27: self = .escape
        case 1...26: self = .control(Character(Unicode.Scalar(UInt8(code) + 0x60)))
        case 0, 28...31: self = .control(Character(Unicode.Scalar(UInt8(code) + 0x40)))
        default:
            // C1 controls are never keys; they could only come from a paste of hostile text.
            guard !(128...159).contains(code), let scalar = Unicode.Scalar(UInt32(bitPattern: code)) else {
                return nil
            }
            self = .character(Character(scalar))
        }
    }

    private static func numberedFunctionKey(_ code: Int32) -> Key? {
        let number = code - cnc_key_f0()
        guard (1..<cnc_key_f_count()).contains(number) else { return nil }
        return .function(Int(number))
    }

    private static let functionKeys: [Int32: Key] = [
        cnc_key_up(): .up,
        cnc_key_down(): .down,
        cnc_key_left(): .left,
        cnc_key_right(): .right,
        cnc_key_home(): .home,
        cnc_key_end(): .end,
        cnc_key_ppage(): .pageUp,
        cnc_key_npage(): .pageDown,
        cnc_key_enter(): .enter,
        cnc_key_btab(): .backTab,
        cnc_key_backspace(): .backspace,
        cnc_key_dc(): .delete,
        cnc_key_resize(): .resize,
    ]
}

extension Key: CustomStringConvertible {
    /// The key's name for a help screen or a status line: `↑`, `PgDn`, `Enter`, `Esc`, `Shift-Tab`, `Ctrl-C`,
    /// `F1`, `Space`, `a`.
    public var description: String {
        description(unicode: true)
    }

    /// The key's name; with `unicode` false, arrows are spelt out (`Up`) for a terminal that cannot show `↑`.
    public func description(unicode: Bool) -> String {
        switch self {
        case .character(" "): return "Space"
        case .character(let character): return String(character).terminalSafe
        case .up: return unicode ? "↑" : "Up"
        case .down: return unicode ? "↓" : "Down"
        case .left: return unicode ? "←" : "Left"
        case .right: return unicode ? "→" : "Right"
        case .home: return "Home"
        case .end: return "End"
        case .pageUp: return "PgUp"
        case .pageDown: return "PgDn"
        case .enter: return "Enter"
        case .escape: return "Esc"
        case .tab: return "Tab"
        case .backTab: return "Shift-Tab"
        case .backspace: return "Backspace"
        case .delete: return "Del"
        case .resize: return "Resize"
        case .control(let character): return "Ctrl-" + String(character).uppercased().terminalSafe
        case .function(let number): return "F\(number)"
        }
    }
}
