import ContactsTesting
import Foundation
import SyncTesting
import TestTraits
import Testing

@testable import ContactsLocal
@testable import ContactsModel
@testable import ContactsStore

#if canImport(Glibc)
    import Glibc
#endif

/// Two `contacts` apps in tmux on the zero-setup local server, as a user runs them with no setup at all: the
/// server dies (`kill -9`), and the apps start it again by themselves, on its socket, and carry on.
@Suite(
    "End to end: two contacts apps survive the local server's crash", .serialized, .aheadOfTheCrowd,
    .enabled(if: EndToEnd.unavailableReason == nil, Comment(rawValue: EndToEnd.unavailableReason ?? "")),
    .timeLimit(.minutes(10)))
struct LocalServerEndToEndTests {
    @Test("the local server is killed; an edit made on A meanwhile reaches B once the apps restarted it, no key on B")
    func serverCrash() async throws {
        let world = try await LocalServerWorld()
        defer { world.close() }
        let (a, b) = (world.a, world.b)
        let local = world.local
        try await world.waitFor(a, "Push      connected")
        try await world.waitFor(b, "Push      connected")
        try await world.waitFor(b, "› Grace Hopper")
        let first = try #require(local.running(), "the first command started the local server")

        // Held as a `contacts` command starting the server would hold it: the apps cannot start it again
        // until the test lets go, so that the edit below is surely made while the server is down.
        let startLock = try HeldLock(path: local.serverDirectory + "/start.lock")
        kill(first.pid, SIGKILL)
        try await world.waitFor(a, "Push      not connected")
        try await world.waitFor(b, "Push      not connected")

        try a.send("e")
        try await world.waitFor(a, "Edit contact")
        try a.send("C-u")
        try a.send("Grace Brewster Hopper", literal: true)
        try a.send("Enter")
        try await world.waitFor(a, "› Grace Brewster Hopper")
        try await world.waitFor(a, "Pending   1 change not on the server yet")
        #expect(local.running() == nil, "the edit was made while no server ran")

        // Let go: the apps start the server again on its socket, reconnect, and A's edit reaches B.
        startLock.release()
        let released = ContinuousClock.now
        try await world.waitFor(b, "› Grace Brewster Hopper")
        let arrival = ContinuousClock.now - released
        try await world.waitFor(b, "Push      reconnected at")
        try await world.waitFor(a, "Pending   nothing to send")
        let second = try #require(local.running(), "an app started the server again")
        #expect(second.pid != first.pid)
        #expect(local.url == URL(string: "http+unix://" + local.socketPath.replacingOccurrences(of: "/", with: "%2F")))
        #expect(
            try FileManager.default.attributesOfItem(atPath: local.socketPath)[.type] as? FileAttributeType
                == .typeSocket, "it listens on its socket again")
        // For the record (a figure, not a limit): how long the edit took to reach B once the apps could start
        // the server again, and what B showed then.
        print("local server crash: the edit reached B \(arrival) after the start lock was released; A, then B:")
        print(try a.capture() + "\n" + b.capture())
    }
}

/// A data directory with the zero-setup local server (started by a first `contacts add`, as a user's first
/// command would), and a tmux terminal running the app for devices a and b.
final class LocalServerWorld {
    let directory: URL
    let contacts: String
    let local: LocalServer
    private var sessions: [TmuxSession] = []

    var a: TmuxSession { sessions[0] }
    var b: TmuxSession { sessions[1] }

    init() async throws {
        contacts = try #require(EndToEnd.contacts)
        directory = URL(fileURLWithPath: TemporaryFiles.path("tui-local"))
        local = LocalServer.ofContacts(dataDirectory: directory.appendingPathComponent("data").path, program: contacts)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let log = directory.appendingPathComponent("cli.log").path
        let status = try await ChildProcess.run(
            [contacts, "--data-dir", local.dataDirectory, "--device", "a", "add", "--name", "Grace Hopper"],
            output: .file(log)
        ).status
        try #require(status == 0, "contacts add failed; see \(log)")
        for device in ["a", "b"] {
            // Sending at once under the suite's load: what these tests check is the crash and the restart.
            let command = [contacts, "--data-dir", local.dataDirectory, "--device", device, "--sync-when-busy"]
            sessions.append(
                try TmuxSession(
                    columns: 100, rows: 30, command: command.map { "'\($0)'" }.joined(separator: " ")))
        }
    }

    deinit {
        close()
    }

    /// Polls `session`'s screen until it contains `text`; fails showing both screens and the server's log.
    /// The report also goes to standard error: a long comment did not reach a CI run's output.
    func waitFor(_ session: TmuxSession, _ text: String, timeout: Double = 150) async throws {
        if try await session.wait(timeout: timeout, until: { try session.capture().contains(text) }) { return }
        let name = session.directory == a.directory ? "A" : "B"
        let screens = sessions.map { (try? $0.capture()) ?? "" }.joined(separator: "\n")
        let log = (try? String(contentsOfFile: local.logFile, encoding: .utf8)) ?? "none"
        let report =
            "\(name) never showed \"\(text)\" within \(timeout) s; the screens, A then B:\n\(screens)\nthe server's log:\n\(log)"
        // Also on standard error: a long comment may not reach the test run's output.
        FileHandle.standardError.write(Data(("LocalServerEndToEndTests: " + report + "\n").utf8))
        Issue.record(Comment(rawValue: report))
        throw EndToEnd.Timeout()
    }

    /// Closes the apps, then stops the server they may have started and removes everything.
    func close() {
        for session in sessions { session.close() }
        sessions = []
        if let running = local.running() {
            kill(running.pid, SIGTERM)
            let deadline = Date().addingTimeInterval(60)
            while local.running() != nil, Date() < deadline { usleep(20_000) }
            if local.running() != nil { kill(running.pid, SIGKILL) }
        }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// An exclusive `flock` on a file, held until released.
final class HeldLock {
    private var descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EBUSY)
        }
    }

    func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
