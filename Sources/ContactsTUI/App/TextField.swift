import Terminal

/// One line of editable text and its cursor, for the form, the search and the prompts.
///
/// The cursor counts graphemes, so a CJK character, an emoji or a letter with combining marks moves and
/// deletes as one.
public struct TextField: Sendable, Equatable {
    /// The text.
    public private(set) var text: String
    /// Where the cursor is: the number of graphemes before it.
    public private(set) var cursor: Int

    /// A field holding `text`, the cursor at its end.
    public init(_ text: String = "") {
        self.text = text
        cursor = text.count
    }

    /// Whether the field holds nothing.
    public var isEmpty: Bool { text.isEmpty }

    /// Inserts `character` at the cursor.
    public mutating func insert(_ character: Character) {
        var characters = Array(text)
        characters.insert(character, at: cursor)
        // A combining mark typed after a letter joins it: count graphemes again rather than assume +1.
        let before = String(characters[...cursor])
        text = String(characters)
        cursor = before.count
    }

    /// Replaces the whole text, the cursor at its end.
    public mutating func replace(with text: String) {
        self = TextField(text)
    }

    /// Applies an editing key.
    public mutating func apply(_ command: KeyMap.TextCommand) {
        var characters = Array(text)
        switch command {
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(characters.count, cursor + 1)
        case .home: cursor = 0
        case .end: cursor = characters.count
        case .deleteBackward:
            guard cursor > 0 else { return }
            characters.remove(at: cursor - 1)
            cursor -= 1
        case .deleteForward:
            guard cursor < characters.count else { return }
            characters.remove(at: cursor)
        case .deleteToStart:
            characters.removeSubrange(0..<cursor)
            cursor = 0
        case .deleteToEnd:
            characters.removeSubrange(cursor...)
        case .deleteWord:
            var start = cursor
            while start > 0 && characters[start - 1].isWhitespace { start -= 1 }
            while start > 0 && !characters[start - 1].isWhitespace { start -= 1 }
            characters.removeSubrange(start..<cursor)
            cursor = start
        }
        text = String(characters)
    }

    /// The part of the text to show in a field `width` columns wide, scrolled so that the cursor is visible,
    /// and the cursor's column in it. The cursor after the last character needs a column of its own.
    public func visible(width: Int) -> (text: String, cursorColumn: Int) {
        guard width > 0 else { return ("", 0) }
        let characters = Array(text)
        var start = 0
        var beforeCursor = characters[..<cursor].reduce(0) { $0 + $1.displayWidth }
        while beforeCursor > width - 1 && start < cursor {
            beforeCursor -= characters[start].displayWidth
            start += 1
        }
        var shown = ""
        var used = 0
        for character in characters[start...] {
            let characterWidth = character.displayWidth
            guard used + characterWidth <= width else { break }
            shown.append(character)
            used += characterWidth
        }
        return (shown, beforeCursor)
    }
}
