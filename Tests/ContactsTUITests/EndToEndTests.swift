import Foundation
import SyncTesting
import TestTraits
import Testing

@testable import ContactsModel
@testable import ContactsStore

/// Two `contacts` apps in two real terminals (tmux) against one sync server: what one does appears on the
/// other's screen without a key press there, and an app that loses its server says so and recovers by itself.
@Suite(
    "End to end: two contacts apps in tmux, one server", .serialized, .aheadOfTheCrowd,
    .enabled(if: EndToEnd.unavailableReason == nil, Comment(rawValue: EndToEnd.unavailableReason ?? "")),
    .timeLimit(.minutes(10)))
struct EndToEndTests {
    @Test("add, edit and delete on A appear on B by themselves; B resizes; A shows a lost server and recovers")
    func twoDevices() async throws {
        let world = try await EndToEnd()
        defer { world.close() }
        try world.launch(["a", "b"])
        let (a, b) = (world.a, world.b)
        try await world.waitFor(a, "Push      connected")
        try await world.waitFor(b, "Push      connected")

        // Add on A and back up: B shows it, though nobody touches B.
        try a.send("a")
        try a.send("Grace Hopper", literal: true)
        try a.send("Tab")
        try a.send("work: grace@example.org", literal: true)
        try a.send("Enter")
        try await world.waitFor(a, "Saved Grace Hopper")
        try a.send("b")
        try await world.waitFor(a, "Backed up.")
        try await world.waitFor(b, "› Grace Hopper")
        try await world.waitFor(b, "work: grace@example.org")
        // A search by a field the list does not hold (her email): the store looks, and B shows her.
        try b.send("/")
        try b.send("example.org", literal: true)
        try await world.waitFor(b, "/example.org · 1 of 1")
        try await world.waitFor(b, "› Grace Hopper")
        try b.send("Escape")
        try await world.waitFor(b, "┌─ Contacts · 1 ─")

        // Edit.
        try a.send("e")
        try a.send("C-u")
        try a.send("Grace Brewster Hopper", literal: true)
        try a.send("Enter")
        try a.send("b")
        try await world.waitFor(b, "› Grace Brewster Hopper")

        // Delete, answering the question.
        try a.send("d")
        try await world.waitFor(a, "[y/N]")
        try a.send("y")
        try a.send("b")
        try await world.waitFor(b, "Contacts · 0")
        try await world.waitFor(b, "No contacts yet.")

        // B's terminal is resized: everything is laid out again, down to 40x12; smaller says so.
        try b.resize(columns: 40, rows: 12)
        try await world.waitFor(b, "├─ Details ─")
        try b.resize(columns: 39, rows: 11)
        try await world.waitFor(b, "Terminal too small: 39x11.")
        try b.resize(columns: 100, rows: 30)
        try await world.waitFor(b, "┌─ Contacts · 0 ─")

        // The server goes away: A keeps the new contact, and shows the error and what is pending.
        world.stopServer()
        try a.send("a")
        try a.send("Katherine Johnson", literal: true)
        try a.send("Enter")
        try await world.waitFor(a, "› Katherine Johnson")
        try a.send("b")
        try await world.waitFor(a, "✖ error")
        try await world.waitFor(a, "Pending   1 change not on the server yet")

        // It comes back: A sends by itself, and B receives.
        try await world.startServer()
        // A's retry may wait out its backoff, and the push socket reconnects with backoff too.
        try await world.waitFor(a, "Pending   nothing to send")
        try await world.waitFor(a, "● idle")
        try await world.waitFor(b, "› Katherine Johnson")

        // q and Ctrl-C quit and give the terminal back.
        for (app, key) in [(a, "q"), (b, "C-c")] {
            try app.send(key)
            #expect(try await app.wait { try app.format("#{pane_dead}") == "1" })
            #expect(try app.format("#{alternate_on}") == "0")
        }
    }
}

/// A server, devices signed in to their accounts (two of Ada's by default), and a tmux terminal running
/// `contacts` for each device launched. Everything it started stops when it is closed or released, even after
/// a failure.
final class EndToEnd {
    /// Where the test binary is: `swift build` puts `contacts` next to it, whatever the scratch path.
    static let binaryDirectory: URL? = {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            return nil
        }
        return URL(fileURLWithPath: executable).deletingLastPathComponent()
    }()

    static var contacts: String? {
        binaryDirectory.map { $0.appendingPathComponent("contacts").path }.flatMap {
            FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil
        }
    }

    /// Why the test cannot run here, if it cannot.
    static var unavailableReason: String? {
        if TmuxSession.executable == nil { return "tmux is not installed" }
        if contacts == nil { return "the contacts executable is not built next to the test binary (swift build)" }
        if LiveScenario.isRequested { return "this process is the app side of another test" }
        return nil
    }

    let directory: URL
    let port: Int
    let contacts: String
    private var sessions: [TmuxSession] = []
    private var server: ChildProcess?

    private var names: [String] = []

    var a: TmuxSession { sessions[0] }
    var b: TmuxSession { sessions[1] }

    /// The terminal of `device`.
    func session(_ device: String) -> TmuxSession { sessions[names.firstIndex(of: device)!] }
    var serverURL: String { "http://127.0.0.1:\(port)" }

    /// Signs each device in to its account (the first device of an account signs it up).
    init(devices: [(device: String, account: String)] = [("a", "ada"), ("b", "ada")]) async throws {
        contacts = try #require(Self.contacts)
        directory = URL(fileURLWithPath: TemporaryFiles.path("tui-e2e"))
        // Below the ephemeral range: nothing else takes the port while the server is stopped.
        port = try LoopbackPort.unused()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try await startServer()
        var accounts: Set<String> = []
        for (device, account) in devices {
            let command = accounts.insert(account).inserted ? "signup" : "signin"
            let secrets = [
                "CONTACTS_PASSWORD": "correct horse battery",
                "CONTACTS_PASSPHRASE": account == "ada" ? "orbit maple quiet lantern" : "\(account)'s own passphrase",
            ]
            let status = try await ChildProcess.run(
                [contacts, "account", command, "--username", account] + options(device: device), environment: secrets,
                output: .file(directory.appendingPathComponent("cli.log").path)
            ).status
            try #require(status == 0, "contacts account \(command) failed; see \(directory.path)/cli.log")
        }
    }

    /// Opens a terminal running the app for each of `devices`, with `environment` set for it.
    func launch(
        _ devices: [String], columns: Int = 100, rows: Int = 30, environment: [String: String] = [:]
    ) throws {
        let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\(ScriptedEditor.quoted($0.value)) " }
        for device in devices {
            let command = assignments.joined() + app(device: device)
            sessions.append(try TmuxSession(columns: columns, rows: rows, command: command))
            names.append(device)
        }
    }

    /// Runs `contacts ARGUMENTS` on `device` (whose app is not running) and returns its standard output;
    /// fails with both outputs if it exits non-zero.
    @discardableResult
    func cli(_ device: String, _ arguments: [String]) async throws -> String {
        let outcome = try await ChildProcess.run([contacts] + arguments + options(device: device))
        try #require(
            outcome.status == 0,
            "contacts \(arguments.joined(separator: " ")) on \(device) failed: \(outcome.output)\(outcome.error)")
        return outcome.output
    }

    deinit {
        close()
    }

    private func options(device: String) -> [String] {
        // The apps send at once: the suite beside them keeps the load high, and these tests are about what
        // reaches the other screens (the hold under load has its own tests, SyncSchedulerTests).
        ["--server", serverURL, "--data-dir", directory.path, "--device", device, "--sync-when-busy"]
    }

    private func app(device: String) -> String {
        ([contacts] + options(device: device)).map { "'\($0)'" }.joined(separator: " ")
    }

    func startServer() async throws {
        server = try ChildProcess(
            // A server of its own on TCP (the apps pass --server): its storage is not the data directory's.
            [
                contacts, "server", "--port", "\(port)", "--data-dir", directory.path, "--storage",
                directory.appendingPathComponent("tcp-server.sqlite").path, "--bcrypt-cost", "4",
            ],
            output: .file(directory.appendingPathComponent("server.log").path))
        let port = self.port
        let log = directory.appendingPathComponent("server.log").path
        try await waitUntil("the server listens on port \(port)", poll: .milliseconds(50)) {
            LoopbackPort.isListening(port)
        } observed: {
            "its log: " + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "none")
        }
    }

    func stopServer() {
        server?.stop()
        server = nil
    }

    /// Polls `session`'s screen every 50 ms until it contains `text`; fails showing both screens otherwise.
    /// The deadline is generous: a busy machine is slow, not wrong.
    func waitFor(_ session: TmuxSession, _ text: String, timeout: Double = 150) async throws {
        if try await session.wait(timeout: timeout, until: { try session.capture().contains(text) }) { return }
        let name = names[sessions.firstIndex { $0.directory == session.directory } ?? 0]
        // A program that exited shows all it printed (a crash's report starts above the screen).
        let screens = zip(names, sessions).map { name, session in
            "\(name)\(session.hasExited ? " (exited)" : ""):\n"
                + ((try? session.hasExited ? session.history() : session.capture()) ?? "")
        }.joined(separator: "\n")
        Issue.record("\(name) never showed \"\(text)\" within \(timeout) s; the screens:\n\(screens)")
        throw Timeout()
    }

    struct Timeout: Error {}

    func close() {
        for session in sessions { session.close() }
        sessions = []
        stopServer()
        try? FileManager.default.removeItem(at: directory)
    }
}
