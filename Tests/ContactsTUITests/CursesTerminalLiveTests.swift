import Foundation
import SyncTesting
import TestTraits
import Testing

@testable import ContactsTUI
@testable import Terminal

/// Runs ``LiveScenario`` (the app side, a tiny contacts screen) in this same test binary inside tmux, types
/// into it, and reads the screen back. Skipped where tmux is not installed.
@Suite("Curses terminal in a real terminal (tmux)", .serialized, .aheadOfTheCrowd, .enabled(if: LiveScenario.canDrive))
struct CursesTerminalLiveTests {
    @Test("the screen shows the grid, and keys typed in the terminal arrive decoded")
    func keysAndScreen() async throws {
        let app = try LiveApp(mode: "keys")
        defer { app.close() }
        let screen = try await app.waitForScreen(containing: "keys: 0")
        #expect(screen.contains("┌─ Contacts ─"))
        #expect(screen.contains("Eve^[[2J"), "the hostile name is shown escaped")
        let phoneColumns = screen.split(separator: "\n").compactMap { line in
            line.range(of: "555-01").map { line[..<$0.lowerBound].displayWidth }
        }
        #expect(try app.session.captureWithAttributes().contains("\u{1B}[36m"), "the box in the accent colour, cyan")
        #expect(phoneColumns.count == 6)
        #expect(Set(phoneColumns).count == 1, "the phone column lines up after CJK, escapes and emoji sequences")

        let keys: [(send: String, literal: Bool, shown: String)] = [
            ("Up", false, "↑"), ("Down", false, "↓"), ("Left", false, "←"), ("Right", false, "→"),
            ("Home", false, "Home"), ("End", false, "End"), ("PPage", false, "PgUp"), ("NPage", false, "PgDn"),
            ("Tab", false, "Tab"), ("BTab", false, "Shift-Tab"), ("Enter", false, "Enter"), ("Escape", false, "Esc"),
            ("BSpace", false, "Backspace"), ("DC", false, "Del"), ("F5", false, "F5"), ("a", true, "a"),
            ("é", true, "é"), ("张", true, "张"),
        ]
        for (index, key) in keys.enumerated() {
            try app.session.send(key.send, literal: key.literal)
            try await app.waitForScreen(containing: "keys: \(index + 1) last: \(key.shown)")
        }

        try app.session.resize(columns: 50, rows: 10)
        let resized = try await app.waitForScreen(containing: "last: Resize")
        let border = try #require(resized.split(separator: "\n").first)
        #expect(border.displayWidth == 50, "redrawn at the new width")

        #expect(try await app.quitWithControlC() == 0, "Ctrl-C quits cleanly")
        try await app.expectShellTerminal()
        let report = try String(contentsOf: app.report, encoding: .utf8)
        #expect(report == (keys.map(\.shown) + ["Resize", "Ctrl-C"]).joined(separator: "\n") + "\n")
    }

    @Test("in a locale that is not UTF-8 the same layout is drawn in ASCII")
    func asciiLocale() async throws {
        let app = try LiveApp(mode: "keys", locale: "C")
        defer { app.close() }
        let screen = try await app.waitForScreen(containing: "keys: 0")
        #expect(screen.hasPrefix("+- Contacts ---"))
        #expect(screen.contains("| ? ?           555-0100"), "张伟 is two question marks, each padded to 2 columns")
        #expect(screen.unicodeScalars.allSatisfy { $0.isASCII })
        #expect(try await app.quitWithControlC() == 0)
    }

    @Test("NO_COLOR turns colours off, and keeps attributes such as reverse video")
    func noColor() async throws {
        let app = try LiveApp(mode: "keys", extraEnvironment: ["NO_COLOR=1"])
        defer { app.close() }
        try await app.waitForScreen(containing: "keys: 0")
        let screen = try app.session.captureWithAttributes()
        #expect(!screen.contains("\u{1B}[36m"))
        #expect(screen.contains("\u{1B}[7m"))
        #expect(try await app.quitWithControlC() == 0)
    }

    @Test("an unknown TERM is reported with what to do, and leaves the terminal alone")
    func unknownTerminal() async throws {
        let app = try LiveApp(mode: "keys", extraEnvironment: ["TERM=vt9000"])
        defer { app.close() }
        #expect(try await app.waitForExitStatus() != 0)
        let unwrapped = try app.session.capture().replacingOccurrences(of: "\n", with: "")
        #expect(unwrapped.contains("\"vt9000\" (TERM) is unknown to ncurses; try TERM=xterm-256color"))
        try await app.expectShellTerminal()
    }

    @Test("SIGTERM while the app runs gives the shell its screen and cursor back, then ends the app")
    func terminationRestoresTheTerminal() async throws {
        let app = try LiveApp(mode: "keys")
        defer { app.close() }
        try await app.waitForScreen(containing: "keys: 0")
        let pid = try #require(Int32(String(contentsOf: app.pidFile, encoding: .utf8)))
        #expect(kill(pid, SIGTERM) == 0)
        #expect(try await app.waitForExitStatus() == 128 + SIGTERM, "dies of the signal, as it would have")
        try await app.expectShellTerminal()
    }

    @Test("a crash gives the shell its screen and cursor back")
    func crashRestoresTheTerminal() async throws {
        let app = try LiveApp(mode: "crash")
        defer { app.close() }
        let status = try await app.waitForExitStatus()
        #expect([128 + SIGILL, 128 + SIGTRAP].contains(status), "dies of a Swift runtime trap")
        try await app.expectShellTerminal()
    }
}

/// Only ever enabled in the process that ``CursesTerminalLiveTests`` starts inside tmux.
@Suite("The app side of the tests in tmux", .enabled(if: LiveScenario.isRequested))
struct LiveScenarioAppSide {
    @Test("a tiny contacts screen that reports the keys it read")
    @MainActor
    func run() throws {
        try LiveScenario.run()
    }
}

/// The scenario started in tmux, and how to watch it.
private struct LiveApp {
    let session: TmuxSession
    let report: URL
    let pidFile: URL
    let statusFile: URL
    let ttyModesFile: URL

    init(mode: String, locale: String = "C.UTF-8", extraEnvironment: [String] = []) throws {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let report = URL(fileURLWithPath: TemporaryFiles.path("tui-report"))
        self.report = report
        pidFile = report.appendingPathExtension("pid")
        let statusFile = report.appendingPathExtension("status")
        self.statusFile = statusFile
        let ttyModesFile = report.appendingPathExtension("stty")
        self.ttyModesFile = ttyModesFile
        let environment =
            [
                "LANG=\(locale)",
                "LC_ALL=\(locale)",
                "SWIFT_BACKTRACE=enable=no",
                "\(LiveScenario.reportVariable)=\(report.path)",
                "\(LiveScenario.modeVariable)=\(mode)",
            ] + extraEnvironment
        // tmux 3.3 loses the exit status of a program that closes the terminal before it exits, as this test
        // binary does, and reports a dead pane's cursor as hidden; so a shell records the status and then keeps
        // the pane alive, showing the terminal as the app left it. The shell's trap lets it outlive the Ctrl-C
        // meant for the app, whose SIGINT stays at its default: a trap, unlike an ignored signal, is not inherited.
        // `stty -a` records the line discipline's modes the app left behind.
        let command =
            "trap : INT; env \(environment.joined(separator: " ")) '\(executable)' --testing-library swift-testing"
            + " --filter LiveScenarioAppSide; status=$?; stty -a > '\(ttyModesFile.path)';"
            + " echo $status > '\(statusFile.path)'; exec sleep 120"
        session = try TmuxSession(columns: 60, rows: 12, command: command)
    }

    @discardableResult
    func waitForScreen(containing text: String) async throws -> String {
        var screen = ""
        let found = try await session.wait {
            screen = try session.capture()
            return screen.contains(text)
        }
        try #require(found, "never showed \"\(text)\"; the screen was:\n\(screen)")
        return screen
    }

    /// Presses Ctrl-C, and returns the app's exit status.
    func quitWithControlC() async throws -> Int32 {
        try session.send("C-c")
        return try await waitForExitStatus()
    }

    /// The app's exit status as a shell reports it: 128 + the signal's number if a signal ended it.
    func waitForExitStatus() async throws -> Int32 {
        var status: Int32?
        _ = try await session.wait {
            status = (try? String(contentsOf: statusFile, encoding: .utf8)).flatMap {
                Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            return status != nil
        }
        return try #require(status, "the app did not end; the screen was:\n\((try? session.capture()) ?? "")")
    }

    /// The state a shell needs: main screen, visible cursor, cursor keys in normal mode, and the line
    /// discipline back to cooked mode with echo. tmux reads the app's last bytes asynchronously, hence the wait.
    func expectShellTerminal() async throws {
        let flags = "#{alternate_on} #{cursor_flag} #{keypad_cursor_flag}"
        var state = ""
        _ = try await session.wait {
            state = try session.format(flags)
            return state == "0 1 0"
        }
        #expect(state == "0 1 0", "alternate screen, cursor visible, keypad mode should be 0 1 0")
        let modes = try String(contentsOf: ttyModesFile, encoding: .utf8).split(whereSeparator: {
            $0 == " " || $0 == "\n"
        })
        #expect(modes.contains("icanon") && modes.contains("echo"), "line editing and echo are back")
    }

    func close() {
        session.close()
        for file in [report, pidFile, statusFile, ttyModesFile] {
            try? FileManager.default.removeItem(at: file)
        }
    }
}
