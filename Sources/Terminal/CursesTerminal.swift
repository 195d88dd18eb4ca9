import CNcursesw

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one owner of the terminal: every curses call of the app goes through it, on the main actor, because
/// ncurses is not thread-safe.
///
/// Screens render into a ``CellGrid``; this copies the grid to the screen (only the cells that changed) and
/// decodes the keyboard into ``Key``s without ever blocking for long, so the main actor stays free for engine
/// updates.
///
/// ```swift
/// let terminal = CursesTerminal()
/// try terminal.start()
/// defer { terminal.stop() }
/// while true {
///     terminal.draw(render(size: terminal.size))
///     if terminal.readKey() == .control("c") { break }
/// }
/// ```
///
/// The terminal is given back on ``stop()``, on `exit()`, and before the process dies of SIGTERM, SIGHUP,
/// SIGQUIT, a second Ctrl-C, or a crash. Run the app with a UTF-8 locale (`LANG=C.UTF-8`); in any other locale
/// ``supportsUnicode`` is false and non-ASCII text is drawn as `?`, in the same layout.
@MainActor
public final class CursesTerminal {
    /// How long ``readKey()`` waits for a key before it returns nil, in milliseconds.
    public let inputTimeout: Int
    /// Whether ``start()`` has taken over the terminal and ``stop()`` has not given it back.
    public private(set) var isActive = false
    /// Whether the locale is UTF-8, so that the terminal can be sent any Unicode text; decided by ``start()``.
    public private(set) var supportsUnicode = false
    /// Whether text is coloured by ``ColorRole``: the terminal has colours and `NO_COLOR` is unset or empty.
    public private(set) var supportsColor = false

    private var screen: OpaquePointer?
    private var lastDrawn: CellGrid?
    private var needsFullRedraw = true
    private var colorPairs: [ColorRole: Int32] = [:]

    /// A terminal driver that is not started yet.
    ///
    /// - Parameter inputTimeout: How long ``readKey()`` waits, in milliseconds; short, so that the caller can
    ///   also serve other events.
    public init(inputTimeout: Int = 50) {
        self.inputTimeout = max(0, inputTimeout)
    }

    /// Takes over the terminal: full-screen, keys unbuffered and not echoed, no cursor, colours if allowed.
    ///
    /// - Throws: ``CursesTerminalError`` if standard input or output is not a terminal, or ncurses does not know
    ///   the terminal (`TERM`).
    public func start() throws(CursesTerminalError) {
        guard !isActive else { return }
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { throw .notATerminal }
        // Before curses starts, or wide characters are garbage.
        _ = setlocale(LC_ALL, "")
        supportsUnicode = Self.isUTF8(codeset: String(cString: cnc_codeset()))
        TerminalRestorer.unignoreResizeSignal()
        // Before newterm, so that the shell's modes are the ones saved, and so that ncurses, which only catches
        // SIGINT and SIGTERM while they are at their default, leaves them to us.
        TerminalRestorer.install(fileDescriptor: STDOUT_FILENO)
        // newterm rather than initscr: initscr exits the process when TERM is unknown.
        guard let screen = newterm(nil, cnc_stdout(), cnc_stdin()) else {
            TerminalRestorer.uninstall()
            throw .unknownTerminal(getenv("TERM").map { String(cString: $0) } ?? "")
        }
        self.screen = screen
        _ = set_term(screen)
        let window = cnc_stdscr()
        _ = cbreak()  // keys arrive one by one, and Ctrl-C is still SIGINT
        _ = noecho()
        _ = nonl()
        _ = intrflush(window, false)
        _ = keypad(window, true)  // on the window we read from, or arrows arrive as escape sequences
        _ = set_escdelay(25)  // a lone Esc is reported after 25 ms instead of a second
        _ = curs_set(0)
        _ = leaveok(window, true)
        wtimeout(window, Int32(inputTimeout))
        setUpColors()
        TerminalRestorer.arm(resetSequence: Self.resetSequence())
        isActive = true
        lastDrawn = nil
        needsFullRedraw = true
    }

    /// Gives the terminal back as the shell had it. Does nothing if not started; safe to call twice.
    public func stop() {
        guard isActive else { return }
        isActive = false
        _ = endwin()
        TerminalRestorer.uninstall()
        if let screen {
            delscreen(screen)
        }
        screen = nil
        lastDrawn = nil
    }

    /// Gives the terminal to another program (an editor) while `body` runs: the shell's modes and screen
    /// while it runs, then curses' again, drawn whole on the next ``draw(_:)``.
    public func handOver<T>(_ body: () throws -> T) rethrows -> T {
        guard isActive else { return try body() }
        _ = endwin()
        defer {
            _ = refresh()
            needsFullRedraw = true
        }
        return try body()
    }

    /// The screen's size in cells; (0, 0) when not started. Render the next grid at this size, in particular
    /// after ``Key/resize``.
    public var size: (rows: Int, columns: Int) {
        guard isActive else { return (0, 0) }
        return (Int(cnc_lines()), Int(cnc_cols()))
    }

    /// Shows `grid`: writes the cells that differ from the last grid drawn (all of them after a resize or a
    /// change of size) and updates the terminal in one go. Cells beyond the screen are clipped.
    public func draw(_ grid: CellGrid) {
        guard isActive else { return }
        let window = cnc_stdscr()
        let screenSize = size
        let previous = needsFullRedraw ? nil : lastDrawn.flatMap { $0.bounds == grid.bounds ? $0 : nil }
        if previous == nil {
            _ = werase(window)
            _ = clearok(window, needsFullRedraw)
        }
        let rows = min(grid.height, screenSize.rows)
        let columns = min(grid.width, screenSize.columns)
        for row in 0..<rows {
            var column = 0
            while column < columns {
                let cell = grid[row, column]
                var end = column + 1
                while end < grid.width && grid[row, end].isContinuation {
                    end += 1
                }
                if !cell.isContinuation && previous?[row, column] != cell {
                    drawCell(cell, row: row, column: column, columns: min(end, columns) - column)
                }
                column = end
            }
        }
        _ = wnoutrefresh(window)
        _ = doupdate()
        lastDrawn = grid
        needsFullRedraw = false
    }

    /// The next key, waiting at most ``inputTimeout`` milliseconds; nil when none came (or curses reported a
    /// key that ``Key`` does not represent). Ctrl-C is reported as `.control("c")`.
    public func readKey() -> Key? {
        guard isActive else { return nil }
        if TerminalRestorer.takeInterrupt() { return .control("c") }
        var code: wint_t = 0
        let result = wget_wch(cnc_stdscr(), &code)
        guard result != cnc_err() else {
            return TerminalRestorer.takeInterrupt() ? .control("c") : nil
        }
        let key = Key(cursesCode: Int32(bitPattern: code), isFunctionKey: result == cnc_key_code_yes())
        if key == .resize {
            needsFullRedraw = true
        }
        return key
    }

    private func drawCell(_ cell: Cell, row: Int, column: Int, columns: Int) {
        let glyphs = GlyphLayout.glyphs(
            for: cell.grapheme,
            columns: columns,
            unicode: supportsUnicode,
            capacity: Int(cnc_cchar_capacity()),
            scalarWidth: { Int(cnc_wcwidth(wchar_t($0.value))) }
        )
        let (attributes, pair) = attributesAndPair(for: cell.style)
        for glyph in glyphs {
            let characters = glyph.scalars.map { wchar_t($0.value) } + [0]
            _ = cnc_put_cell(cnc_stdscr(), Int32(row), Int32(column + glyph.column), characters, attributes, pair)
        }
    }

    private func attributesAndPair(for style: CellStyle) -> (attr_t, Int32) {
        var attributes = cnc_a_normal()
        if style.bold { attributes |= cnc_a_bold() }
        if style.reverse { attributes |= cnc_a_reverse() }
        if style.underline { attributes |= cnc_a_underline() }
        let pair = colorPairs[style.color]
        // Without a grey to colour it with, muted text is dimmed instead.
        if style.dim || (style.color == .muted && pair == nil) { attributes |= cnc_a_dim() }
        return (attributes, pair ?? 0)
    }

    private func setUpColors() {
        colorPairs = [:]
        supportsColor = false
        guard has_colors(), Self.colorAllowed(noColor: getenv("NO_COLOR").map { String(cString: $0) }) else {
            return
        }
        guard start_color() == cnc_ok() else { return }
        // -1 is the terminal's own background, which use_default_colors makes available.
        let background: Int16 = use_default_colors() == cnc_ok() ? -1 : Int16(COLOR_BLACK)
        // In 16- and 256-colour palettes the bright colours follow the eight basic ones: 8 is bright black, grey.
        let brightBlack: Int32? = cnc_colors() >= 16 ? COLOR_BLACK + 8 : nil
        let foregrounds: [(ColorRole, Int32?)] = [
            (.accent, COLOR_CYAN), (.error, COLOR_RED), (.ok, COLOR_GREEN), (.warning, COLOR_YELLOW),
            (.muted, brightBlack),
        ]
        for (index, (role, foreground)) in foregrounds.enumerated() {
            guard let foreground else { continue }
            let pair = Int32(index + 1)
            if init_pair(Int16(pair), Int16(foreground), background) == cnc_ok() {
                colorPairs[role] = pair
            }
        }
        supportsColor = true
    }

    /// What `endwin` would send, for ``TerminalRestorer`` to send from a signal handler: reset attributes,
    /// show the cursor, keypad off, leave the alternate screen.
    private static func resetSequence() -> [UInt8] {
        var bytes: [UInt8] = []
        for capability in ["sgr0", "cnorm", "rmkx", "rmcup"] {
            guard let value = tigetstr(capability), Int(bitPattern: value) != -1 else { continue }
            bytes += withoutPadding(Array(String(cString: value).utf8))
        }
        return bytes
    }

    /// Terminfo strings may hold delays, `$<5>`, which only `tputs` understands; a terminal would print them.
    nonisolated static func withoutPadding(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "$"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "<"),
                let close = bytes[(index + 2)...].firstIndex(of: UInt8(ascii: ">"))
            {
                index = close + 1
                continue
            }
            result.append(bytes[index])
            index += 1
        }
        return result
    }

    /// Whether colours may be used given the value of `NO_COLOR` (no-color.org: present and not empty disables
    /// them).
    nonisolated static func colorAllowed(noColor: String?) -> Bool {
        noColor?.isEmpty ?? true
    }

    /// Whether a locale's codeset (`nl_langinfo(CODESET)`) is UTF-8.
    nonisolated static func isUTF8(codeset: String) -> Bool {
        let normalized = codeset.lowercased().filter { $0 != "-" && $0 != "_" }
        return normalized == "utf8"
    }
}
