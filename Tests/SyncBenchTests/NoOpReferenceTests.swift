import Foundation
import LocalSystem
import SyncCore
import SyncTesting
import Testing

/// `noop-reference`, the no-op sync's reference in `sync-bench contacts`: it does what it is timed for (a SQLite
/// file opened and read, one request answered, its JSON decoded), and fails, saying why, when it cannot, so that
/// the benchmark never times a program that did less.
@Suite("noop-reference")
struct NoOpReferenceTests {
    /// The built `noop-reference`, next to the test runner.
    static let program = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("noop-reference").path

    @Test("it reads the store and the server's answer, and prints the server's version")
    func readsStoreAndAnswer() async throws {
        try await withTemporaryDirectory { directory in
            // An empty file is an empty SQLite database: no schema rows.
            let store = directory + "/device.sqlite"
            #expect(FileManager.default.createFile(atPath: store, contents: Data()))
            try await TestServer.with { server in
                let outcome = try await ChildProcess.run([Self.program, "--server", server.baseURL, "--store", store])
                #expect(outcome.status == 0, "\(outcome.error)")
                #expect(
                    outcome.output
                        == "nothing new: 0 schema rows in \(store); sync-server \(SyncRelease.version) (ok)\n")
            }
        }
    }

    @Test("a server that does not answer, or a store that is not there, fails it with the reason")
    func failsWithoutServerOrStore() async throws {
        try await withTemporaryDirectory { directory in
            let store = directory + "/device.sqlite"
            #expect(FileManager.default.createFile(atPath: store, contents: Data()))
            // A port nothing listens on, below the range the kernel gives other tests' servers.
            let port = try LoopbackPort.unused()
            let noServer = try await ChildProcess.run([
                Self.program, "--server", "http://127.0.0.1:\(port)", "--store", store,
            ])
            #expect(noServer.status != 0)
            #expect(noServer.output.isEmpty)
            #expect(noServer.error.contains("refused"), "\(noServer.error)")

            try await TestServer.with { server in
                let missing = directory + "/missing.sqlite"
                let noStore = try await ChildProcess.run([Self.program, "--server", server.baseURL, "--store", missing])
                #expect(noStore.status != 0)
                #expect(noStore.error.contains("unable to open database file"), "\(noStore.error)")
                #expect(!FileManager.default.fileExists(atPath: missing), "a read-only open must not create the file")
            }
        }
    }
}
