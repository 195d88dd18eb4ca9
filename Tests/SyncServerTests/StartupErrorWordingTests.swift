import Foundation
import Logging
import SyncServer
import SyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The server library says why it cannot start with the facts and names no option; the `sync-server` program
/// words the same facts with its own options.
@Suite("Startup errors: facts from the library, option names from the program")
struct StartupErrorWordingTests {
    private func temporaryDirectory() throws -> URL {
        let directory = URL(fileURLWithPath: TemporaryFiles.path("startup-wording"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("a port in use: the library reports the address, sync-server says to pass another --port")
    func portInUse() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await ServerProgram(
            ["--port", "0", "--storage", directory.appendingPathComponent("a.sqlite").path],
            log: directory.appendingPathComponent("a.log").path, waitFor: ["listening on http://127.0.0.1:"])
        defer { first.process.stop() }
        let port = try #require(
            first.printed.firstMatch(of: /listening on http:\/\/127\.0\.0\.1:(\d+)/).flatMap { Int($0.1) })

        var runner = SyncServerRunner(storagePath: directory.appendingPathComponent("b.sqlite").path)
        runner.port = port
        runner.logLevel = .critical
        let error = await #expect(throws: StartupError.self) { try await runner.run() }
        #expect(error?.reason == .addressInUse(["127.0.0.1:\(port)"]))
        #expect(error.map { !$0.description.contains("--") } == true, "\(error?.description ?? "")")

        let outcome = try await ChildProcess.run([
            ServerCommandTests.path, "--port", "\(port)", "--storage",
            directory.appendingPathComponent("c.sqlite").path,
        ])
        #expect(outcome.status != 0)
        #expect(
            outcome.error.contains(
                "127.0.0.1:\(port) is already in use; stop what listens there or pass another --port"),
            "\(outcome.error)")
    }

    @Test("a storage file another server uses: the library reports its lock, sync-server names --storage")
    func storageInUse() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = directory.appendingPathComponent("server.sqlite").path
        let first = try await ServerProgram(
            ["--port", "0", "--storage", storage], log: directory.appendingPathComponent("a.log").path,
            waitFor: ["listening on http://127.0.0.1:"])
        defer { first.process.stop() }

        var runner = SyncServerRunner(storagePath: storage)
        runner.port = 0
        runner.logLevel = .critical
        let error = await #expect(throws: StartupError.self) { try await runner.run() }
        #expect(error?.reason == .storageInUse(lockPath: storage + ".lock"))
        #expect(error.map { !$0.description.contains("--") } == true, "\(error?.description ?? "")")

        let outcome = try await ChildProcess.run([ServerCommandTests.path, "--port", "0", "--storage", storage])
        #expect(outcome.status != 0)
        #expect(
            outcome.error.contains("(\(storage).lock is locked); stop it or pass another --storage"), "\(outcome.error)"
        )
    }
}
