import Foundation
import Testing

@testable import ContactsTUI
@testable import Terminal

/// A tiny contacts screen driven by ``CursesTerminal``: the app side of ``CursesTerminalLiveTests``, run in this
/// test binary inside tmux. It shows each key it reads on its status line and writes them all to a report file
/// when it ends.
enum LiveScenario {
    static let reportVariable = "CONTACTS_TUI_LIVE_REPORT"
    static let modeVariable = "CONTACTS_TUI_LIVE_MODE"

    private static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// Whether this process is the app side, started by the live tests.
    static var isRequested: Bool { environment[reportVariable] != nil }

    /// Whether this process can drive the app side: tmux is installed, and this is not the app side itself.
    static var canDrive: Bool { TmuxSession.executable != nil && !isRequested }

    @MainActor
    static func run() throws {
        let report = try #require(environment[reportVariable])
        try "\(getpid())".write(toFile: report + ".pid", atomically: true, encoding: .utf8)
        let terminal = CursesTerminal(inputTimeout: 50)
        try terminal.start()
        defer { terminal.stop() }
        var keys: [String] = []
        terminal.draw(render(size: terminal.size, keys: keys, unicode: terminal.supportsUnicode))
        if environment[modeVariable] == "crash" {
            fatalError("a deliberate crash, to see the terminal restored")
        }
        // Only in case the test that drives it goes away; a busy machine may take minutes to type the keys.
        let deadline = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < deadline {
            guard let key = terminal.readKey() else { continue }
            keys.append(key.description)
            if key == .control("c") { break }
            terminal.draw(render(size: terminal.size, keys: keys, unicode: terminal.supportsUnicode))
        }
        terminal.stop()
        try (keys.joined(separator: "\n") + "\n").write(toFile: report, atomically: true, encoding: .utf8)
    }

    private static func render(size: (rows: Int, columns: Int), keys: [String], unicode: Bool) -> CellGrid {
        var grid = CellGrid(width: size.columns, height: size.rows)
        let (body, status) = grid.bounds.split(bottomHeight: 1)
        let borders = BorderSet.forTerminal(supportsUnicode: unicode)
        grid.drawBox(body, title: "Contacts", borders: borders, style: CellStyle(color: .accent))
        let contacts = [
            ("张伟", "555-0100"), ("Grace Hopper", "555-0101"), ("Eve\u{1B}[2J", "555-0102"),
            ("Zoe\u{308} ❤️", "555-0103"), ("👩‍👩‍👧 Family", "555-0104"), ("🇫🇷 Amélie", "555-0105"),
        ]
        let inside = body.inset(by: 1)
        for (offset, (name, phone)) in contacts.enumerated() where offset < inside.height {
            let row = inside.row + offset
            let used = grid.put(name.truncated(toWidth: 14).padded(toWidth: 14), row: row, column: inside.column + 1)
            grid.put(phone, row: row, column: inside.column + 1 + used, maxWidth: inside.width - used - 1)
        }
        grid.fill(status, style: CellStyle(reverse: true))
        grid.put(
            "keys: \(keys.count) last: \(keys.last ?? "-")", row: status.row, column: 0, style: CellStyle(reverse: true)
        )
        return grid
    }
}
