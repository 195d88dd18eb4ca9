import ContactsLocal
import ContactsTesting
import Foundation
import GRDB
import SyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `contacts` program, as a user or a script would.
struct ContactsProgram {
    static let path = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("contacts").path
    static var isBuilt: Bool { FileManager.default.isExecutableFile(atPath: path) }

    let dataDirectory: String
    var environment: [String: String] = [:]
    /// The server every ``run(on:_:)`` names (`--server`); the local one when nil.
    var server: String?

    typealias Outcome = ChildProcess.Outcome

    @discardableResult
    func run(_ arguments: [String], input: String? = nil) async throws -> Outcome {
        try await ChildProcess.run(
            [Self.path, "--data-dir", dataDirectory] + arguments, environment: environment, input: input)
    }

    /// Runs the program as the device `device` (`--device`), on ``server`` when it is set.
    @discardableResult
    func run(on device: String, _ arguments: [String], input: String? = nil) async throws -> Outcome {
        try await run((server.map { ["--server", $0] } ?? []) + ["--device", device] + arguments, input: input)
    }

    /// Stops the local server the program started in the background, if any, and waits until it is gone.
    /// It is not this process's child (the program that started it has exited), so it cannot be reaped here.
    func stopLocalServer() {
        let local = LocalServer.ofContacts(dataDirectory: dataDirectory, program: Self.path)
        guard let pid = local.knownProcessID() else { return }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(60)
        while Self.isRunning(pid) {
            guard ContinuousClock.now < deadline else {
                Issue.record("the local server (pid \(pid)) did not stop within 60 s of SIGTERM; killing it")
                kill(pid, SIGKILL)
                return
            }
            usleep(10_000)
        }
    }

    /// The password hashes a server program stored in its SQLite file at `path`.
    static func passwordHashes(inServerStorage path: String) async throws -> [String] {
        try await DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT password_hash FROM account")
        }
    }

    /// Whether `pid` is a live process (a zombie waiting to be reaped is not).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        // "pid (name) S …": the state follows the name's closing parenthesis.
        guard let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first != "Z"
    }
}
