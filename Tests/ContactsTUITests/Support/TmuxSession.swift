import Foundation
import SyncTesting

/// A tmux server of its own (private socket, no user configuration) running one command in a detached window,
/// for tests that drive a program through a real terminal.
struct TmuxSession {
    /// The tmux executable on PATH, if any.
    static let executable: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/tmux" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }()

    let directory: URL
    private var socket: String { directory.appendingPathComponent("socket").path }
    private let target = "live"

    /// Starts `command` (run by `sh -c`) in a window of `columns` x `rows`. The pane stays after the command
    /// exits, so that the tests can inspect how the program left the terminal.
    init(columns: Int, rows: Int, command: String) throws {
        directory = URL(fileURLWithPath: TemporaryFiles.path("tui"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = directory.appendingPathComponent("tmux.conf")
        try "set -g remain-on-exit on\nset -g default-terminal screen\n".write(
            to: configuration,
            atomically: true,
            encoding: .utf8
        )
        try run([
            "-f", configuration.path, "new-session", "-d", "-s", target, "-x", "\(columns)", "-y", "\(rows)", command,
        ])
    }

    /// The visible screen as text, one line per row.
    func capture() throws -> String {
        try run(["capture-pane", "-p", "-t", target])
    }

    /// Everything the pane printed, its scrollback included: for a program that crashed, its whole report.
    func history() throws -> String {
        try run(["capture-pane", "-p", "-S", "-", "-t", target])
    }

    /// Whether the command in the pane has exited (the pane stays, `remain-on-exit`).
    var hasExited: Bool { (try? format("#{pane_dead}")) == "1" }

    /// The visible screen with its colours and attributes, as SGR escape sequences.
    func captureWithAttributes() throws -> String {
        try run(["capture-pane", "-p", "-e", "-t", target])
    }

    /// The value of a tmux format such as `#{alternate_on}` for the pane.
    func format(_ format: String) throws -> String {
        try run(["display-message", "-p", "-t", target, format]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Types keys: tmux key names (`Up`, `C-c`, `F5`), or literal text with `literal: true`.
    func send(_ keys: String, literal: Bool = false) throws {
        try run(["send-keys", "-t", target] + (literal ? ["-l", keys] : [keys]))
    }

    /// Resizes the window, as a user dragging the terminal's corner would.
    func resize(columns: Int, rows: Int) throws {
        try run(["resize-window", "-t", target, "-x", "\(columns)", "-y", "\(rows)"])
    }

    /// Polls `condition` every 50 ms for up to `timeout` seconds; whether it came true. The deadline is
    /// generous: it only matters when something is broken, and a busy machine is slow, not wrong. Waits
    /// without holding a thread, so that the tests running beside this one go on meanwhile.
    func wait(timeout: Double = 60, until condition: () throws -> Bool) async throws -> Bool {
        do {
            try await waitUntil(
                "the terminal shows what the test waits for", timeout: .seconds(timeout), poll: .milliseconds(50)
            ) {
                try condition()
            }
            return true
        } catch is WaitTimeout {
            return false
        }
    }

    /// Stops this session's server (only ours: it has its own socket) and removes its files.
    func close() {
        _ = try? run(["kill-server"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs a tmux command; returns its standard output. A command that starts the server does not capture
    /// output: the server would hold the pipe open.
    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        let command = [Self.executable ?? "tmux", "-u", "-S", socket] + arguments
        // The tests decide about colour, and this is not a tmux inside the tmux that may run the tests.
        let environment: [String: String?] = ["LANG": "C.UTF-8", "TMUX": nil, "NO_COLOR": nil]
        guard arguments.first != "-f" else {
            try ChildProcess(command, environment: environment).wait()
            return ""
        }
        return try ChildProcess.runBlocking(command, environment: environment).output
    }
}
