import ContactsModel

/// One `cchar_t` to put on the screen: a spacing scalar and its combining scalars, at a column offset inside a
/// grid cell.
struct CursesGlyph: Sendable, Equatable {
    /// Columns from the grid cell's own column.
    var column: Int
    /// One spacing scalar, then the zero-width scalars drawn on top of it.
    var scalars: [Unicode.Scalar]
}

/// Turns a grid cell into what curses can draw so that the terminal, curses and the grid agree on every
/// column, whatever the terminal thinks of emoji.
///
/// curses and the terminal measure each scalar with `wcwidth`, which knows nothing of grapheme clusters: tmux 3.3
/// shows `❤️` and `1️⃣` in 1 column and `👍🏽` in 4, while ``Swift/Character/displayWidth`` (and newer terminals)
/// say 2. So an emoji sequence is drawn as its first scalar alone (`❤`, `1`, `👍`, `👩` for a family), and
/// whatever columns the grid gave the grapheme beyond what `wcwidth` measured are filled with spaces. The picture
/// is simpler, but no cell ever moves. Flags are the exception: see `drawableScalars`.
enum GlyphLayout {
    /// The glyphs for one grid cell.
    ///
    /// - Parameters:
    ///   - grapheme: The cell's grapheme, already terminal-safe.
    ///   - columns: The columns the grid gave it: 1 plus its continuation cells.
    ///   - unicode: Whether the terminal's locale is UTF-8; if not, the grapheme is drawn as
    ///     ``Swift/String/asciiSafe``.
    ///   - capacity: How many scalars one `cchar_t` holds (`CCHARW_MAX`).
    ///   - scalarWidth: The terminal's width of a scalar: `wcwidth` in the live locale, -1 if unprintable.
    static func glyphs(
        for grapheme: String,
        columns: Int,
        unicode: Bool,
        capacity: Int,
        scalarWidth: (Unicode.Scalar) -> Int
    ) -> [CursesGlyph] {
        var glyphs: [CursesGlyph] = []
        var column = 0
        for scalar in drawableScalars(of: grapheme, unicode: unicode) {
            let width = scalarWidth(scalar)
            if width == 0 {
                // A combining scalar goes on top of the previous glyph; without one it has nothing to mark.
                if let last = glyphs.indices.last, glyphs[last].scalars.count < capacity {
                    glyphs[last].scalars.append(scalar)
                }
                continue
            }
            let (drawn, drawnWidth): (Unicode.Scalar, Int) = width < 0 ? ("?", 1) : (scalar, width)
            guard column + drawnWidth <= columns else {
                // The terminal thinks it wider than the grid does: mark the spot instead of spilling over.
                if column < columns {
                    glyphs.append(CursesGlyph(column: column, scalars: ["?"]))
                    column += 1
                }
                break
            }
            glyphs.append(CursesGlyph(column: column, scalars: [drawn]))
            column += drawnWidth
        }
        while column < columns {
            glyphs.append(CursesGlyph(column: column, scalars: [" "]))
            column += 1
        }
        return glyphs
    }

    private static func drawableScalars(of grapheme: String, unicode: Bool) -> [Unicode.Scalar] {
        guard unicode else { return Array(grapheme.asciiSafe.unicodeScalars) }
        guard let character = grapheme.first else { return [] }
        // A flag's two regional indicators are 1 column each for wcwidth, so drawn side by side they fill the
        // grid's 2 columns, whether the terminal joins them into a flag (tmux 3.3) or not (xterm).
        if character.isEmojiSequence, let first = grapheme.unicodeScalars.first, !first.isRegionalIndicator {
            return [first]
        }
        return Array(grapheme.unicodeScalars)
    }
}
