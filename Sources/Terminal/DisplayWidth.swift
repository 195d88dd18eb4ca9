import ContactsModel

extension Character {
    /// How many terminal columns this grapheme takes once it is displayed.
    ///
    /// - East Asian Wide and Fullwidth characters (CJK ideographs, Hangul, kana, fullwidth forms) take 2.
    /// - Emoji take 2: those with emoji presentation, and sequences that ask for it (ZWJ sequences, flags,
    ///   keycaps, skin tones, a base followed by U+FE0F).
    /// - Combining marks, format characters (ZWJ, ZWSP) and variation selectors take 0, so a base with marks
    ///   is as wide as its base; a spacing mark (Devanagari ि) takes 1, as in terminals.
    /// - A control character, or a bidi override, is measured as the visible escape that
    ///   ``Swift/String/terminalSafe`` shows in its place (ESC is `^[`, 2 columns).
    ///
    /// Ambiguous-width characters (box drawing, `…`, Greek, Cyrillic) take 1, as tmux and xterm do by default.
    public var displayWidth: Int {
        let scalars = unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.needsTerminalEscape {
            return String(self).terminalSafe.displayWidth
        }
        if isEmojiSequence {
            return 2
        }
        var width = 0
        for scalar in scalars {
            width += scalar.columnWidth
        }
        return width
    }

    /// Whether this grapheme is an emoji sequence that modern terminals draw as one 2-column picture:
    /// a flag, a keycap, a ZWJ sequence, a skin-tone sequence, a tag sequence, or a base with U+FE0F.
    var isEmojiSequence: Bool {
        let scalars = unicodeScalars
        guard let first = scalars.first, scalars.count > 1 else { return false }
        if first.isRegionalIndicator {
            return scalars.dropFirst().first?.isRegionalIndicator == true
        }
        guard first.properties.isEmoji else { return false }
        let isPictographic = !first.isASCII
        for scalar in scalars.dropFirst() {
            switch scalar.value {
            case 0xFE0F, 0x20E3:
                return true
            case 0x200D, 0x1F3FB...0x1F3FF, 0xE0020...0xE007F:
                if isPictographic { return true }
            default:
                continue
            }
        }
        return false
    }
}

extension Unicode.Scalar {
    /// The columns of this scalar on its own, for a printable scalar (controls are escaped before this is used).
    var columnWidth: Int {
        switch value {
        case 0x00AD:
            // SOFT HYPHEN is a format character that terminals nevertheless show as a hyphen.
            return 1
        case 0x1160...0x11FF, 0xD7B0...0xD7FF:
            // Hangul vowels and final consonants join the leading consonant's 2 columns.
            return 0
        default:
            break
        }
        switch properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format:
            return 0
        default:
            break
        }
        if EastAsianWidth.isWide(self) {
            return 2
        }
        // A lone regional indicator is a letter-like symbol of 1 column (East Asian Width N); only a pair is a flag.
        if properties.isEmojiPresentation && !isRegionalIndicator {
            return 2
        }
        return 1
    }

    var isRegionalIndicator: Bool {
        (0x1F1E6...0x1F1FF).contains(value)
    }
}

extension StringProtocol {
    /// How many terminal columns this text takes: the sum of its graphemes' ``Swift/Character/displayWidth``.
    public var displayWidth: Int {
        var width = 0
        for character in self {
            width += character.displayWidth
        }
        return width
    }

    /// This text cut to at most `width` columns, never splitting a grapheme.
    ///
    /// Text that fits is returned unchanged. Otherwise the result is exactly `width` columns: whole graphemes,
    /// then, if `ellipsis` is true, `…`; a wide grapheme that no longer fits leaves a space in its place.
    ///
    /// ```swift
    /// "张伟".truncated(toWidth: 3, ellipsis: false)  // "张 "
    /// "Grace Hopper".truncated(toWidth: 6, ellipsis: true)  // "Grace…"
    /// ```
    public func truncated(toWidth width: Int, ellipsis: Bool = true) -> String {
        guard width > 0 else { return "" }
        guard displayWidth > width else { return String(self) }
        let budget = ellipsis ? width - 1 : width
        var result = ""
        var used = 0
        for character in self {
            let characterWidth = character.displayWidth
            guard used + characterWidth <= budget else { break }
            result.append(character)
            used += characterWidth
        }
        result.append(String(repeating: " ", count: budget - used))
        if ellipsis {
            result.append("…")
        }
        return result
    }

    /// This text followed by spaces up to `width` columns; text that is already as wide is returned unchanged.
    public func padded(toWidth width: Int) -> String {
        let missing = width - displayWidth
        guard missing > 0 else { return String(self) }
        return String(self) + String(repeating: " ", count: missing)
    }
}
