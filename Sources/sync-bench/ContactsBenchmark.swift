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

    @OptionGroup var programs: ProgramOptions

    func validate() throws {
        guard !counts.isEmpty, counts.allSatisfy({ $0 > 0 }) else {
            throw ValidationError("--counts takes positive numbers, such as --counts 1000 10000")
        }
    }

    func run() async throws {
        let (contactsPath, serverPath) = try programs.paths()
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
                    "| \(count) | \(step.name) | \(ContactsCommands.format(step.seconds)) | \(perSecond) | \(step.peakKiB / 1024) MB |"
                )
            }
        }
        // Linux counts the peak of the process that spawns a command to the command, until it starts.
        print("")
        print(
            "peak RSS of this benchmark process: \(BenchSupport.peakResidentKiB(of: "self") / 1024) MB (no step's figure is below it)"
        )
    }
}

/// One benchmark run: two devices' data directories, a vCard file, and the commands between them.
private struct BenchRun {
    typealias Step = ContactsCommands.Step

    let count: Int
    let commands: ContactsCommands

    init(contacts: String, server: String, count: Int) throws {
        self.count = count
        commands = try ContactsCommands(contacts: contacts, server: server, name: "contacts-bench")
    }

    func remove() { commands.remove() }

    func steps() throws -> [Step] {
        let cards = commands.directory.appendingPathComponent("cards.vcf")
        try VCardGenerator.write(count: count, to: cards)
        try commands.signUp()

        var steps: [Step] = []
        steps.append(
            try commands.timed("import on A (--no-sync)", "A", ["import", cards.path, "--no-sync"], contacts: count))
        steps.append(try commands.timed("sync A (upload)", "A", ["sync"], contacts: count))
        steps.append(try commands.timed("sync B (first download)", "B", ["sync"], contacts: count))
        // A few tens of milliseconds, mostly starting a process: one run says little, so the median of five.
        let noOps = try (0..<5).map { _ in
            try commands.timed("sync B again (nothing new, median of 5)", "B", ["sync"])
        }
        steps.append(ContactsCommands.median(noOps))

        let id = try commands.firstContactID("A")
        let edit = try commands.timed("edit one on A (--no-sync)", "A", ["edit", id, "--note", "edited", "--no-sync"])
        let sendEdit = try commands.timed("sync A (the edit)", "A", ["sync"])
        let fetchEdit = try commands.timed("sync B (the edit)", "B", ["sync"])
        steps += [edit, sendEdit, fetchEdit]
        steps.append(
            Step(
                name: "edit, sync A, sync B (total)", seconds: edit.seconds + sendEdit.seconds + fetchEdit.seconds,
                peakKiB: max(edit.peakKiB, sendEdit.peakKiB, fetchEdit.peakKiB)))

        let shown = try commands.command("B", ["show", id]).output
        guard shown.contains("edited") else { throw ValidationError("device B did not get the edit: \(shown)") }
        let listed = try commands.command("B", ["list"]).output.split(separator: "\n").count
        guard listed == count else { throw ValidationError("device B lists \(listed) contacts, expected \(count)") }
        return steps
    }
}
