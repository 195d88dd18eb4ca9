import ArgumentParser
import Foundation
import SyncTesting

/// Measures the contacts app as a user meets it: whole `contacts` commands, each a new process,
/// against a release `sync-server`. For each N it generates N vCards, imports them on device A,
/// syncs A (the upload), syncs B (the first download), syncs B again (nothing to do; the median of
/// five runs), then edits one contact on A and syncs A and B. Each step prints its wall time,
/// contacts per second and the command's peak resident memory.
struct ContactsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contacts",
        abstract: "Contacts app: import, upload, first download, no-op sync and one edit, as whole commands.")

    @Option(
        parsing: .upToNextOption,
        help: "How many contacts to generate, one run each.")
    var counts: [Int] = [1_000, 10_000]

    @Option(help: "Path of the contacts executable (default: next to this one).")
    var contacts: String?

    @Option(help: "Path of the sync-server executable (default: next to this one).")
    var server: String?

    func validate() throws {
        guard !counts.isEmpty, counts.allSatisfy({ $0 > 0 }) else {
            throw ValidationError("--counts takes positive numbers, such as --counts 1000 10000")
        }
    }

    func run() async throws {
        let contactsPath = try BenchSupport.executable(contacts, named: "contacts", option: "contacts")
        let serverPath = try ServerProcess.executable(server)
        print("| N | step | time | contacts/s | peak RSS |")
        print("| ---: | --- | ---: | ---: | ---: |")
        for count in counts {
            let server = try await ServerProcess.start(executable: serverPath)
            defer { server.stop() }
            let run = try BenchRun(contacts: contactsPath, server: server.baseURL, count: count)
            defer { run.remove() }
            for step in try run.steps() {
                let perSecond = step.contacts.map { String(Int(Double($0) / step.seconds)) } ?? ""
                print(
                    "| \(count) | \(step.name) | \(Self.format(step.seconds)) | \(perSecond) | \(step.peakKiB / 1024) MB |"
                )
            }
        }
        // Linux counts the peak of the process that spawns a command to the command, until it starts.
        print("")
        print(
            "peak RSS of this benchmark process: \(BenchSupport.peakResidentKiB(of: "self") / 1024) MB (no step's figure is below it)"
        )
    }

    static func format(_ seconds: Double) -> String {
        seconds < 1 ? "\(Int((seconds * 1000).rounded())) ms" : String(format: "%.2f s", seconds)
    }
}

/// One benchmark run: two devices' data directories, a vCard file, and the commands between them.
private struct BenchRun {
    struct Step {
        var name: String
        var seconds: Double
        var peakKiB: Int
        var contacts: Int?
    }

    let contacts: String
    let server: String
    let count: Int
    let directory: URL

    init(contacts: String, server: String, count: Int) throws {
        self.contacts = contacts
        self.server = server
        self.count = count
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("contacts-bench-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    func steps() throws -> [Step] {
        let cards = directory.appendingPathComponent("cards.vcf")
        try VCardGenerator.write(count: count, to: cards)
        _ = try command("A", ["account", "signup", "--username", "bench"])
        _ = try command("B", ["account", "signin", "--username", "bench"])

        var steps: [Step] = []
        steps.append(try timed("import on A (--no-sync)", "A", ["import", cards.path, "--no-sync"], contacts: count))
        steps.append(try timed("sync A (upload)", "A", ["sync"], contacts: count))
        steps.append(try timed("sync B (first download)", "B", ["sync"], contacts: count))
        // A few tens of milliseconds, mostly starting a process: one run says little, so the median of five.
        let noOps = try (0..<5).map { _ in try timed("sync B again (nothing new, median of 5)", "B", ["sync"]) }
        steps.append(noOps.sorted { $0.seconds < $1.seconds }[2])

        // Only the first line: the whole list would raise this process's peak, which Linux counts to
        // every command it starts afterwards.
        let list = try command("A", ["list"], outputLimit: 4096).output
        guard let id = list.split(separator: "\n").first?.split(whereSeparator: { $0 == " " || $0 == "\t" }).first
        else {
            throw ValidationError("`contacts list` on A printed nothing after the import")
        }
        let edit = try timed("edit one on A (--no-sync)", "A", ["edit", String(id), "--note", "edited", "--no-sync"])
        let sendEdit = try timed("sync A (the edit)", "A", ["sync"])
        let fetchEdit = try timed("sync B (the edit)", "B", ["sync"])
        steps += [edit, sendEdit, fetchEdit]
        steps.append(
            Step(
                name: "edit, sync A, sync B (total)", seconds: edit.seconds + sendEdit.seconds + fetchEdit.seconds,
                peakKiB: max(edit.peakKiB, sendEdit.peakKiB, fetchEdit.peakKiB)))

        let shown = try command("B", ["show", String(id)]).output
        guard shown.contains("edited") else { throw ValidationError("device B did not get the edit: \(shown)") }
        let listed = try command("B", ["list"]).output.split(separator: "\n").count
        guard listed == count else { throw ValidationError("device B lists \(listed) contacts, expected \(count)") }
        return steps
    }

    private func timed(_ name: String, _ device: String, _ arguments: [String], contacts: Int? = nil) throws -> Step {
        let result = try command(device, arguments)
        return Step(name: name, seconds: result.seconds, peakKiB: result.peakKiB, contacts: contacts)
    }

    /// What one command did: how long it took, its peak memory and what it printed.
    struct Command {
        var seconds: Double
        var peakKiB: Int
        var output: String
    }

    /// Runs `contacts --device D --server URL --data-dir DIR ARGS…` and waits for it.
    private func command(_ device: String, _ arguments: [String], outputLimit: Int = .max) throws -> Command {
        let log = directory.appendingPathComponent("output.txt").path
        try? FileManager.default.removeItem(atPath: log)
        let start = ContinuousClock.now
        let ended = try ChildProcess(
            [
                contacts, "--device", device, "--server", server, "--data-dir",
                directory.appendingPathComponent("data").path,
            ]
                + arguments,
            environment: ["CONTACTS_PASSWORD": "bench-password", "CONTACTS_PASSPHRASE": "bench passphrase"],
            output: .file(log)
        ).wait()
        let seconds = (ContinuousClock.now - start).inSeconds
        let file = try? FileHandle(forReadingFrom: URL(fileURLWithPath: log))
        defer { try? file?.close() }
        let output = String(decoding: (try? file?.read(upToCount: outputLimit)) ?? Data(), as: UTF8.self)
        guard ended.status == 0 else {
            throw ValidationError("`contacts \(arguments.joined(separator: " "))` failed: \(output)")
        }
        return Command(seconds: seconds, peakKiB: ended.peakResidentKiB, output: output)
    }
}
