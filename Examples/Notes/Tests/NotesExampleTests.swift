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

/// docs/TABLES.md's "Try it", run as written (its server is a test server here, its data directory a
/// temporary one): a command the page gives that stops working fails here.
@Suite struct TablesPageTests {
    /// The page's shell lines after `## Try it`, up to the next heading.
    static func tryIt() throws -> [String] {
        let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../../docs/TABLES.md")
        let text = try String(contentsOf: page, encoding: .utf8)
        var lines: [String] = []
        var within = false
        var inside = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("## ") { within = line == "## Try it" }
            guard within else { continue }
            if line.hasPrefix("```") {
                inside.toggle()
            } else if inside, !line.isEmpty {
                lines.append(line)
            }
        }
        return lines
    }

    /// Splits a shell line into words: spaces separate, single and double quotes group.
    static func words(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character?
        var started = false
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                started = true
            } else if character == " " {
                if started || !current.isEmpty { words.append(current) }
                current = ""
                started = false
            } else {
                current.append(character)
            }
        }
        if started || !current.isEmpty { words.append(current) }
        return words
    }

    @Test("every command of docs/TABLES.md's \"Try it\" runs as written, and the desktop lists the laptop's note")
    func pageCommands() async throws {
        let lines = try Self.tryIt()
        #expect(lines.first == "swift run sync-server")
        try await withTemporaryDirectory("notes-page") { directory in
            try await TestServer.with { server in
                var environment: [String: String?] = ["XDG_DATA_HOME": directory]
                var outputs: [String] = []
                for line in lines.dropFirst() {
                    let words = Self.words(line)
                    switch words.first {
                    case "swift":
                        // The test's own build made the program.
                        #expect(words == ["swift", "build", "--product", "notes"], "\(line)")
                    case "export":
                        for assignment in words.dropFirst() {
                            let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
                            environment[parts[0]] = parts.count == 2 ? parts[1] : ""
                        }
                        // The page's server is `swift run sync-server`'s address; here, the test server's.
                        #expect(environment["SYNCKIT_SERVER"] == "http://127.0.0.1:8080")
                        environment["SYNCKIT_SERVER"] = server.baseURL
                    case ".build/debug/notes":
                        let outcome = try await ChildProcess.run(
                            [NotesExampleTests.program] + words.dropFirst(), environment: environment)
                        #expect(outcome.status == 0, "\(line): \(outcome.error)")
                        outputs.append(outcome.output)
                    default:
                        Issue.record("docs/TABLES.md gives a command this test has no case for: \(line)")
                    }
                }
                #expect(outputs.count == 4)
                #expect(outputs.last(where: { $0.contains("Groceries") })?.contains("Groceries  #home") == true)
                #expect(outputs.last == "Everything is synced.\n")
            }
        }
    }
}
