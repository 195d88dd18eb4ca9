import ContactsLocal
import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncCore
import SyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The zero-setup local server as a user meets it through the `contacts` program: started when needed, on its
/// Unix socket, managed with `contacts server status | start | stop`, and private to the user.
@Suite(
    "contacts: the local server", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct LocalServerTests {
    @Test("files are 0600 and directories 0700 under a fresh data directory, once the server ran and devices synced")
    func fileModes() async throws {
        try await withTemporaryDirectory { temporary in
            // A data directory that contacts creates, as it does the first time.
            let directory = temporary + "/contacts"
            let program = ContactsProgram(dataDirectory: directory)
            defer { program.stopLocalServer() }
            let added = try await program.run(["add", "--name", "Ada Lovelace"])
            #expect(added.status == 0, "\(added.error)")
            let synced = try await program.run(["--device", "laptop", "sync"])
            #expect(synced.status == 0, "\(synced.error)")

            var seen: [String: Int] = [:]
            let enumerator = FileManager.default.enumerator(atPath: directory)
            while let relative = enumerator?.nextObject() as? String {
                let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + relative)
                seen[relative] = (attributes[.posixPermissions] as? Int) ?? -1
            }
            let root = try FileManager.default.attributesOfItem(atPath: directory)
            #expect((root[.posixPermissions] as? Int) == 0o700, "the data directory itself")
            // What the README promises, each checked by name so that a file missing here is noticed too.
            for file in [
                "server/server.sqlite", "server/server.sqlite-wal", "server/server.sqlite-shm",
                "server/server.sqlite.lock",
                "server/server.log", "server/sync.sock", "server/start.lock", "local-account", "devices/default.sqlite",
                "devices/default.sqlite.lock", "devices/laptop.sqlite",
            ] {
                #expect(seen[file] != nil, "\(file) exists; found \(seen.keys.sorted())")
            }
            for (path, mode) in seen.sorted(by: { $0.key < $1.key }) {
                var isDirectory: ObjCBool = false
                FileManager.default.fileExists(atPath: directory + "/" + path, isDirectory: &isDirectory)
                let expected = isDirectory.boolValue ? 0o700 : 0o600
                // A socket's mode does not protect it (connecting needs write permission on Linux, which 0600
                // gives only the owner anyway); the 0700 directory around it does.
                #expect(mode == expected, "\(path) is \(String(mode, radix: 8)), not \(String(expected, radix: 8))")
            }
        }
    }

    @Test("status, start, stop; killed with kill -9, the server comes back on its socket with the next command")
    func lifecycle() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            defer { program.stopLocalServer() }
            let local = LocalServer.ofContacts(dataDirectory: directory, program: ContactsProgram.path)

            let before = try await program.run(["server", "status"])
            #expect(before.status == 3, "not running exits 3: \(before.output) \(before.error)")
            #expect(before.output.contains("not running"))

            let started = try await program.run(["server", "start"])
            #expect(started.status == 0, "\(started.error)")
            #expect(started.output.contains("runs on \(local.socketPath)"), "\(started.output)")
            let running = try #require(local.running(), "the server holds its storage's lock")
            let status = try await program.run(["server", "status", "--json"])
            #expect(status.status == 0)
            let report = try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any]
            #expect(report?["running"] as? Bool == true)
            #expect(report?["url"] as? String == local.url.absoluteString)
            #expect(report?["socket"] as? String == local.socketPath)
            #expect(report?["pid"] as? Int == Int(running.pid))
            #expect(report?["storage"] as? String == DataDirectory.Layout(directory).serverStorage)
            #expect(report?["log"] as? String == DataDirectory.Layout(directory).serverLog)
            let again = try await program.run(["server", "start"])
            #expect(again.status == 0 && again.output.contains("already runs"), "\(again.output)")

            // It dies without a word (its socket file stays): the next command that needs it starts it again.
            kill(running.pid, SIGKILL)
            try await waitUntil("the killed server's lock is released") { local.running() == nil }
            let added = try await program.run(["add", "--name", "Grace Hopper"])
            #expect(added.status == 0, "\(added.error)")
            #expect(!added.error.contains("not synced"), "the add synced: \(added.error)")
            // Reported with the server's log if not: a server that exits after answering says why there.
            try await waitUntil("the add started the server again, and it runs") {
                local.running() != nil
            } observed: {
                let log =
                    (try? String(contentsOfFile: DataDirectory.Layout(directory).serverLog, encoding: .utf8))
                    ?? "no log"
                return "no process holds the storage lock; the server's log ends:\n"
                    + log.split(separator: "\n").suffix(8).joined(separator: "\n")
            }
            let back = try #require(local.running(), "the add started the server again")
            #expect(back.pid != running.pid)

            // Stopped gracefully: it has exited when stop returns.
            let stopped = try await program.run(["server", "stop"])
            #expect(stopped.status == 0, "\(stopped.error)")
            #expect(stopped.output.contains("stopped the local sync server (pid \(back.pid))"), "\(stopped.output)")
            #expect(local.running() == nil)
            #expect(!ContactsProgram.isRunning(back.pid))
            let after = try await program.run(["server", "status"])
            #expect(after.status == 3)
            #expect(after.output.contains("stopped with `contacts server stop`"), "\(after.output)")
            #expect(after.output.contains(local.socketPath), "\(after.output)")
            let twice = try await program.run(["server", "stop"])
            #expect(twice.status == 0 && twice.output.contains("not running"), "\(twice.output)")

            // Any command that needs it starts it again, on its socket.
            let synced = try await program.run(["sync"])
            #expect(synced.status == 0, "\(synced.error)")
            #expect(local.running() != nil)
        }
    }

    /// A copy, in `directory`, of a data directory made by the version before the socket (`contacts add`
    /// twice, `add --no-sync` once, `server stop`): the server's storage and its saved port, the local
    /// account, two devices' files.
    static func dataDirectoryBeforeTheSocket(in directory: String) throws -> String {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/local-server-before-socket").path
        let data = directory + "/contacts"
        try FileManager.default.copyItem(atPath: fixture, toPath: data)
        // Git keeps no directory modes.
        for path in [data, DataDirectory.Layout(data).server, DataDirectory.Layout(data).devices] { chmod(path, 0o700) }
        return data
    }

    @Test("a data directory of the version before the socket moves to it on its first start, data kept")
    func upgradeFromTheTCPLayout() async throws {
        try await withTemporaryDirectory { directory in
            let data = try Self.dataDirectoryBeforeTheSocket(in: directory)
            let program = ContactsProgram(dataDirectory: data)
            defer { program.stopLocalServer() }
            let local = LocalServer.ofContacts(dataDirectory: data, program: ContactsProgram.path)
            #expect(FileManager.default.fileExists(atPath: DataDirectory.Layout(data).legacyServerAddress))

            let synced = try await program.run(["sync"])
            #expect(synced.status == 0, "\(synced.error)")
            #expect(local.running() != nil, "the server runs again")
            #expect(FileManager.default.fileExists(atPath: local.socketPath), "on its socket")
            #expect(
                !FileManager.default.fileExists(atPath: DataDirectory.Layout(data).legacyServerAddress),
                "the old port is forgotten")
            #expect(try await program.run(["--device", "laptop", "sync"]).status == 0)
            let listed = try await program.run(["--device", "laptop", "list"])
            #expect(listed.status == 0, "\(listed.error)")
            for name in ["Ada Lovelace", "Grace Hopper", "Offline Edit"] {
                #expect(listed.output.contains(name), "\(name) reached the second device: \(listed.output)")
            }
        }
    }

    @Test(
        "a local server older than the program (an upgrade while it ran) is stopped and the program's own started, data kept"
    )
    func olderLocalServerIsReplaced() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory + "/contacts"
            let program = ContactsProgram(dataDirectory: data)
            defer { program.stopLocalServer() }
            let added = try await program.run(["add", "--name", "Ada Lovelace"])
            #expect(added.status == 0, "\(added.error)")
            let local = LocalServer.ofContacts(dataDirectory: data, program: ContactsProgram.path)
            let before = try #require(local.running(), "the first command started the server").pid

            // Of the same release: left running.
            _ = try await local.ensureRunning()
            #expect(local.running()?.pid == before)

            // As a program one release newer sees it: replaced by the one it starts.
            let newer = ReleaseVersion(SyncRelease.version.major, SyncRelease.version.minor + 1, 0)
            let upgraded = LocalServer(dataDirectory: data, launchCommand: local.launchCommand, version: newer)
            _ = try await upgraded.ensureRunning()
            let after = try #require(local.running(), "a server runs").pid
            #expect(after != before, "the older server was stopped and another started")
            #expect(!upgraded.wasStoppedOnPurpose, "apps start it again after this stop")
            #expect(try await program.run(["--device", "laptop", "sync"]).status == 0)
            let listed = try await program.run(["--device", "laptop", "list"])
            #expect(listed.status == 0 && listed.output.contains("Ada Lovelace"), "\(listed)")
        }
    }

    @Test("a server of the version before the socket, still running on its port, is moved to the socket")
    func runningServerOfTheTCPLayoutIsMoved() async throws {
        try await withTemporaryDirectory { directory in
            let data = try Self.dataDirectoryBeforeTheSocket(in: directory)
            let program = ContactsProgram(dataDirectory: data)
            defer { program.stopLocalServer() }
            let local = LocalServer.ofContacts(dataDirectory: data, program: ContactsProgram.path)
            // As the old version ran it: a TCP server on the data directory's storage, holding its lock.
            let server = URL(fileURLWithPath: ContactsProgram.path).deletingLastPathComponent()
                .appendingPathComponent("sync-server").path
            let old = try ChildProcess([server, "--storage", local.storagePath, "--port", "0"])
            defer { old.terminate() }
            try await waitUntil("the old-style server holds the storage") { local.running() != nil }
            let oldPID = try #require(local.running()).pid

            let synced = try await program.run(["sync"])
            #expect(synced.status == 0, "\(synced.error)")
            let now = try #require(local.running(), "a server runs")
            #expect(now.pid != oldPID, "the old server was stopped and a new one started")
            #expect(FileManager.default.fileExists(atPath: local.socketPath))
            let listed = try await program.run(["list"])
            #expect(listed.output.contains("Offline Edit"), "\(listed.output)")
        }
    }

    @Test(
        "contacts server --help explains each verb; --port, which only a TCP server had, and --bcrypt-cost for the local one are refused with why"
    )
    func help() async throws {
        let program = ContactsProgram(dataDirectory: NSTemporaryDirectory())
        let help = try await program.run(["server", "--help"])
        #expect(help.status == 0)
        for verb in ["status", "start", "stop", "run"] {
            #expect(help.output.contains(verb), "\(verb) in \(help.output)")
        }
        for verb in ["status", "start", "stop", "run"] {
            let verbHelp = try await program.run(["server", verb, "--help"])
            #expect(verbHelp.status == 0 && verbHelp.output.contains("USAGE"), "\(verb): \(verbHelp.error)")
        }
        let bad = try await program.run(["server", "start", "--port", "8080"])
        #expect(bad.status != 0 && bad.error.contains("no longer listens on a port"), "\(bad.error)")
        // The local server's password is kept beside it: a bcrypt cost is for a server of one's own.
        let cost = try await program.run(["server", "run", "--bcrypt-cost", "12"])
        #expect(cost.status != 0 && cost.error.contains("--bcrypt-cost is for a server of its own"), "\(cost.error)")
        let tooLow = try await program.run(["server", "run", "--storage", "/tmp/x.sqlite", "--bcrypt-cost", "3"])
        #expect(tooLow.status != 0 && tooLow.error.contains("--bcrypt-cost must be from 4 to 31"), "\(tooLow.error)")
    }
}
