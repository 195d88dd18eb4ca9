import Testing

@testable import Terminal

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Curses terminal: the decisions made before curses starts")
struct CursesTerminalTests {
    @Test(
        "NO_COLOR present and not empty turns colours off (no-color.org)",
        arguments: [(nil, true), ("", true), ("1", false), ("0", false), ("yes", false)] as [(String?, Bool)]
    )
    func noColor(value: String?, allowed: Bool) {
        #expect(CursesTerminal.colorAllowed(noColor: value) == allowed)
    }

    @Test(
        "Unicode is sent only when the locale's codeset is UTF-8",
        arguments: [("UTF-8", true), ("utf8", true), ("UTF8", true), ("ANSI_X3.4-1968", false), ("ISO-8859-1", false)]
    )
    func utf8Codeset(codeset: String, isUTF8: Bool) {
        #expect(CursesTerminal.isUTF8(codeset: codeset) == isUTF8)
    }

    @Test("terminfo delays are removed from the bytes a signal handler writes")
    func paddingRemoved() {
        let rmcup = Array("\u{1B}[?1049l$<5>\u{1B}[23;0;0t$<2/>".utf8)
        #expect(CursesTerminal.withoutPadding(rmcup) == Array("\u{1B}[?1049l\u{1B}[23;0;0t".utf8))
        #expect(CursesTerminal.withoutPadding(Array("costs $5".utf8)) == Array("costs $5".utf8))
    }

    @Test("a terminal that was never started reports no size, no keys, and stops without harm")
    @MainActor
    func notStarted() {
        let terminal = CursesTerminal()
        #expect(terminal.size == (0, 0))
        #expect(terminal.readKey() == nil)
        terminal.draw(CellGrid(width: 3, height: 1))
        terminal.stop()
        terminal.stop()
        #expect(!terminal.isActive)
    }

    @Test(
        "starting without a terminal (output to a pipe) throws, and leaves the process as it was",
        .enabled(if: isatty(STDOUT_FILENO) == 0, "only when the tests' output is not a terminal")
    )
    @MainActor
    func startWithoutTerminal() {
        let terminal = CursesTerminal()
        #expect(throws: CursesTerminalError.notATerminal) { try terminal.start() }
        #expect(!terminal.isActive)
        #expect(terminal.readKey() == nil)
    }

    @Test("the errors tell the user what to do")
    func errorMessages() {
        #expect(CursesTerminalError.notATerminal.description.contains("terminal"))
        #expect(CursesTerminalError.unknownTerminal("vt9000").description.contains("TERM=xterm-256color"))
        #expect(CursesTerminalError.unknownTerminal("").description.contains("TERM is not set"))
    }
}
