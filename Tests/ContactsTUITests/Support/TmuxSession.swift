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
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tui-\(UUID().uuidString)")
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

    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        try Self.spawn(
            [Self.executable ?? "tmux", "-u", "-S", socket] + arguments,
            captureOutput: arguments.first != "-f"
        )
    }

    /// Runs a program and returns its standard output.
    ///
    /// Not Foundation's `Process`: it passes on the spawning thread's signal mask, and the threads Swift Testing
    /// runs tests on block most signals. A tmux server started that way, and every program it starts, would
    /// never see SIGTERM, SIGINT (Ctrl-C) or SIGCHLD. So this spawns with an empty mask and default actions.
    /// A command that starts the server does not capture output: the server would hold the pipe open.
    private static func spawn(_ arguments: [String], captureOutput: Bool) throws -> String {
        let spawnAttributes = SpawnAttributes()

        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw POSIXError(.EMFILE) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if captureOutput {
            posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Nothing else of this process (the pipe's ends included, once duplicated): the tmux server outlives
        // the command, and a socket of another test's server that it inherited would stay open as long.
        addCloseFrom(&actions, 3)

        var environment = ProcessInfo.processInfo.environment
        environment["LANG"] = "C.UTF-8"
        environment.removeValue(forKey: "TMUX")
        environment.removeValue(forKey: "NO_COLOR")  // the tests decide about colour
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for string in argv + envp {
                free(string)
            }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, &spawnAttributes.attributes, argv, envp)
        Glibc.close(pipeEnds[1])
        defer { Glibc.close(pipeEnds[0]) }
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .ENOENT) }

        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(pipeEnds[0], &buffer, buffer.count)
            if count > 0 {
                output += buffer[..<count]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return String(decoding: output, as: UTF8.self)
    }
}
