import Foundation
import GRDB
import LocalSystem
import NotesExample
import SyncKit
import SyncTables
import SyncTesting
import TestTraits
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The example, as its user runs it: devices of one account (and a friend's) through the real server.
@Suite(.onEveryBackend)
struct NotesExampleTests {
    static let program = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("notes").path

    private func notebook(_ device: String, _ username: String, _ server: TestServer, in directory: String) throws
        -> Notebook
    {
        try Notebook(
            path: "\(directory)/\(device).sqlite",
            container: Container(
                identifier: "notes",
                configuration: ContainerConfiguration(
                    serverURL: URL(string: server.baseURL)!, username: username, password: "notes of \(username)",
                    signUp: true, passphrase: "passphrase of \(username)")))
    }

    @Test("a note with tags and an attachment reaches another device; deleting it takes its children everywhere")
    func twoDevices() async throws {
        try await withTemporaryDirectory("notes") { directory in
            try await TestServer.with { server in
                let laptop = try notebook("laptop", "ada", server, in: directory)
                let desktop = try notebook("desktop", "ada", server, in: directory)
                for device in [laptop, desktop] { try device.sync.start() }
                let scan = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
                let id = try laptop.add(
                    title: "Receipts", body: "March\nApril", tags: ["home", "tax"], attachments: [("scan.png", scan)])
                try await laptop.sync.sync()
                try await desktop.sync.sync()
                let note = try #require(try desktop.notes().first)
                #expect(note.title == "Receipts" && note.body == "March\nApril")
                #expect(note.tags == ["home", "tax"])
                #expect(try desktop.attachment(of: id, named: "scan.png") == scan)

                // Both devices tag "home": one tag, not two.
                _ = try desktop.add(title: "Plants", tags: ["home"])
                try await desktop.sync.sync()
                try await laptop.sync.sync()
                #expect(
                    try await laptop.database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM tag") } == 2)

                try desktop.delete(id)
                try await desktop.sync.sync()
                try await laptop.sync.sync()
                #expect(try laptop.notes().map(\.title) == ["Plants"])
                #expect(
                    try await laptop.database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM attachment")
                    } == 0)
                #expect(try laptop.sync.pendingChanges().isEmpty && laptop.sync.unappliedRecords().isEmpty)
                for device in [laptop, desktop] { await device.sync.stop() }
            }
        }
    }

    @Test("`notes add` killed with SIGKILL while its send is held at the server: the next sync sends it, once")
    func killedBetweenWriteAndSend() async throws {
        try await withTemporaryDirectory("notes") { directory in
            try await TestServer.with { server in
                let environment: [String: String?] = [
                    "SYNCKIT_SERVER": server.baseURL, "SYNCKIT_USERNAME": "ada", "SYNCKIT_PASSWORD": "notes of ada",
                    "SYNCKIT_PASSPHRASE": "passphrase of ada", "SYNCKIT_SIGN_UP": "1", "XDG_DATA_HOME": directory,
                ]
                func notes(_ arguments: [String]) async throws -> ChildProcess.Outcome {
                    let outcome = try await ChildProcess.run([Self.program] + arguments, environment: environment)
                    #expect(outcome.status == 0, "notes \(arguments.joined(separator: " ")): \(outcome.error)")
                    return outcome
                }
                _ = try await notes(["sync", "--device", "laptop"])  // the account and the zone

                let gate = server.faults.closeGate(pathPrefix: "/v1/databases/private/records/modify")
                let add = try ChildProcess(
                    [Self.program, "add", "--device", "laptop", "Held", "--body", "sent after a crash", "--tag", "x"],
                    environment: environment)
                try await gate.waitUntilHeld(timeout: .seconds(120))
                add.terminate(SIGKILL)
                _ = add.wait()
                // The held request goes on without anyone to hear its answer.
                gate.open()

                let status = try await notes(["status", "--device", "laptop"])
                #expect(status.output.contains("pending save note"), "the write outlived the process: \(status.output)")
                let again = try await notes(["sync", "--device", "laptop"])
                #expect(again.output.contains("1 notes, 0 pending"), "\(again.output)")
                let other = try await notes(["sync", "--device", "desktop"])
                #expect(other.output.contains("1 notes, 0 pending, 0 waiting"), "\(other.output)")
                let shown = try await notes(["list", "--device", "desktop"])
                #expect(shown.output.contains("Held  #x"), "\(shown.output)")
                let conflicts = try await notes(["conflicts", "--device", "laptop"])
                #expect(conflicts.output.hasPrefix("No conflicts"), "a lost answer is no conflict: \(conflicts.output)")
            }
        }
    }
}
