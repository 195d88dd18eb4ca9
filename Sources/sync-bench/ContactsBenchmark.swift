import ArgumentParser
import ContactsLocal
import Foundation
import SyncTesting

/// Measures the contacts app as a user meets it: whole `contacts` commands, each a new process,
/// against a release `sync-server`. For each N it generates N vCards, imports them on device A,
/// syncs A (the upload), syncs B (the first download), syncs B again (nothing to do; the median of
/// five runs, each beside a run of `contacts --version` and one of `noop-reference`, the no-op's
/// reference), edits one contact on A and syncs A and B (five rounds), then lists and exports every
/// contact on B. Each step prints its wall time, contacts per second and the command's peak resident memory. Right after each count's steps, the in-run
/// reference (``ContactsReference``) measures what the machine allows for the import, the upload and the first
/// download of the same contacts, and each of those steps is printed beside it, as a ratio.
struct ContactsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contacts",
        abstract: "Contacts app: import, upload, first download, no-op sync and one edit, as whole commands.")

    @Option(
        parsing: .upToNextOption,
        help: "How many contacts to generate, one run each.")
    var counts: [Int] = [1_000, 10_000]

    @OptionGroup var programs: ProgramOptions

    @Option(help: "Path of the noop-reference executable, the no-op sync's reference (default: next to this one).")
    var noopReference: String?

    func validate() throws {
        guard !counts.isEmpty, counts.allSatisfy({ $0 > 0 }) else {
            throw ValidationError("--counts takes positive numbers, such as --counts 1000 10000")
        }
    }

    @OptionGroup var saving: SavingOptions

    @Flag(
        help:
            "Keep each run's directory (the vCards and both devices' files, such as data/devices/B.sqlite for sync-bench tui --device) and say where it is."
    )
    var keepData = false

    func run() async throws {
        let (contactsPath, serverPath) = try programs.paths()
        let noOpReferencePath = try BenchSupport.executable(
            noopReference, named: "noop-reference", option: "noop-reference")
        var results = BenchResults(suite: "contacts")
        results.measuring([contactsPath, serverPath, noOpReferencePath])
        print("| N | step | time | contacts/s | peak RSS | CPU: the command + the server |")
        print("| ---: | --- | ---: | ---: | ---: | ---: |")
        var references: [(count: Int, steps: [BenchRun.Step], reference: ContactsReference)] = []
        for count in counts {
            // No storage quota: a million contacts are more than the default 1 GiB of one account.
            let server = try await ServerProcess.start(
                executable: serverPath, arguments: ["--quota-bytes", "unlimited"])
            defer { server.stop() }
            let run = try BenchRun(
                contacts: contactsPath, noOpReferencePath: noOpReferencePath, server: server, count: count)
            defer { if keepData { print("kept: \(run.commands.directory.path)") } else { run.remove() } }
            let steps = try run.steps()
            for step in steps {
                let perSecond = step.contacts.map { String(Int(Double($0) / step.seconds)) } ?? ""
                // The server's CPU comes from /proc in clock ticks (10 ms): said for the steps over every contact.
                let cpu = [step.cpuSeconds, step.contacts == nil ? nil : step.serverCPUSeconds].compactMap {
                    $0.map(ContactsCommands.format)
                }
                print(
                    "| \(count) | \(step.name) | \(ContactsCommands.format(step.seconds)) | \(perSecond) | \(step.peakKiB / 1024) MB | \(cpu.joined(separator: " + ")) |"
                )
            }
            let sizes = run.fileSizes()
            print(
                "| \(count) | device files beside the vCards (\(String(format: "%.1f", Double(sizes.cards) / 1_048_576)) MB) | A \(String(format: "%.2f", sizes.ratioA))×, B \(String(format: "%.2f", sizes.ratioB))× | | | |"
            )
            Self.record(steps, sizes: sizes, count: count, in: &results)
            let reference = try await ContactsReference.measure(run, contacts: contactsPath, server: server.baseURL)
            reference.record(steps, count: count, in: &results)
            references.append((count, steps, reference))
        }
        ContactsReference.printTable(references)
        Self.printNoOpTable(references.map { ($0.count, $0.steps) })
        // Linux counts the peak of the process that spawns a command to the command, until it starts.
        print("")
        print(
            "peak RSS of this benchmark process: \(BenchSupport.peakResidentKiB(of: "self") / 1024) MB (no step's figure is below it)"
        )
        try results.save(to: saving.json)
    }

    /// The no-op sync of each count beside its reference (`noop-reference`) and the app's start alone.
    static func printNoOpTable(_ measured: [(count: Int, steps: [BenchRun.Step])]) {
        print("")
        print(
            "The no-op sync beside the least such a sync must do (noop-reference: the same libraries, a SQLite file, one request) and the app's start alone (contacts --version), each the median of 5 runs taken in turn:"
        )
        print("| N | no-op sync (target < 20 ms) | noop-reference | no-op ÷ reference | contacts --version |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        for (count, steps) in measured {
            let seconds = [BenchRun.noOp, BenchRun.noOpReference, BenchRun.appStart].map { name in
                steps.first { $0.name == name }?.seconds
            }
            guard let noOp = seconds[0], let reference = seconds[1], let start = seconds[2] else { continue }
            print(
                "| \(count) | \(ContactsReference.format(noOp)) | \(ContactsReference.format(reference)) | "
                    + "\(String(format: "%.1f", noOp / reference))× | \(ContactsReference.format(start)) |")
        }
    }

    /// The edit round's figure: an edit on A, A's sync and B's, the median of five rounds' totals.
    static let editRound = "edit, sync A, sync B (total, median of 5)"
    /// Every contact listed, and exported as vCards, on B.
    static let listAll = "list on B (every contact)"
    static let exportAll = "export on B (every contact, vCard 4)"

    /// The figures of one count, with the issues' targets: 10,000 contacts a second each way, a no-op
    /// sync under 20 ms (issue 66; 30 ms before), an edit round under 150 ms, every command under 150 MB
    /// (the list and the export too, which have no target of time), device files at most twice the vCards.
    static func record(_ steps: [BenchRun.Step], sizes: BenchRun.Sizes, count: Int, in results: inout BenchResults) {
        let keys = [
            "import on A (--no-sync)": "import", "sync A (upload)": "upload", "sync B (first download)": "download",
            BenchRun.noOp: "noop", BenchRun.appStart: "noopAppStart", BenchRun.noOpReference: "noopReference",
            Self.editRound: "editRound", Self.listAll: "list",
            Self.exportAll: "export",
        ]
        let targets = [
            "import": Double(count) / 10_000, "upload": Double(count) / 10_000, "download": Double(count) / 10_000,
            "noop": 0.020, "editRound": 0.150,
        ]
        for step in steps {
            guard let key = keys[step.name] else { continue }
            results.add(
                "contacts.\(count).\(key).seconds", name: "\(count): \(step.name)", unit: "s", better: .lower,
                runs: step.runs ?? [step.seconds], target: targets[key])
            results.add(
                "contacts.\(count).\(key).peakMB", name: "\(count): \(step.name), peak RSS", unit: "MB", better: .lower,
                runs: [Double(step.peakKiB) / 1024], target: 150)
            // Where a bulk step's time goes: the command's CPU and the server's, beside its wall time.
            guard ["import", "upload", "download"].contains(key) else { continue }
            for (part, name, seconds) in [
                ("cpu", "the command's CPU", step.cpuSeconds), ("serverCPU", "the server's CPU", step.serverCPUSeconds),
            ] {
                guard let seconds else { continue }
                results.add(
                    "contacts.\(count).\(key).\(part).seconds", name: "\(count): \(step.name), \(name)", unit: "s",
                    better: .lower, runs: [seconds])
            }
        }
        if let noOp = steps.first(where: { $0.name == BenchRun.noOp }),
            let reference = steps.first(where: { $0.name == BenchRun.noOpReference })
        {
            results.add(
                "contacts.\(count).noop.ratio", name: "\(count): the no-op sync ÷ noop-reference", unit: "×",
                better: .lower, runs: [noOp.seconds / reference.seconds])
        }
        for (device, ratio) in [("A", sizes.ratioA), ("B", sizes.ratioB)] {
            results.add(
                "contacts.\(count).deviceFile\(device).ratio",
                name: "\(count): device \(device)'s file beside the vCards",
                unit: "×", better: .lower, runs: [ratio], target: 2)
        }
    }
}

/// One benchmark run: two devices' data directories, a vCard file, and the commands between them.
struct BenchRun {
    typealias Step = ContactsCommands.Step

    /// The vCards' size and each device's files (its SQLite file with its log) beside it.
    struct Sizes {
        var cards: Int64
        var ratioA: Double
        var ratioB: Double
    }

    func fileSizes() -> Sizes {
        func size(_ path: String) -> Int64 {
            ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
        }
        let cards = max(1, size(commands.directory.appendingPathComponent("cards.vcf").path))
        func device(_ name: String) -> Double {
            let file = deviceFile(name)
            return Double(size(file) + size(file + "-wal")) / Double(cards)
        }
        return Sizes(cards: cards, ratioA: device("A"), ratioB: device("B"))
    }

    let count: Int
    let commands: ContactsCommands

    /// The store of device `name`.
    func deviceFile(_ name: String) -> String {
        DataDirectory.Layout(commands.directory.appendingPathComponent("data").path).deviceFile(name)
    }

    /// The no-op sync, and what its time is held beside: the app's start alone (`contacts --version`: process
    /// start and its options parsed) and the no-op's reference (`noop-reference`: the least such a sync must do,
    /// as a program of the same libraries).
    static let noOp = "sync B again (nothing new, median of 5)"
    static let appStart = "contacts --version (the app's start alone, median of 5)"
    static let noOpReference = "noop-reference: SQLite file, one request (median of 5)"

    /// The `noop-reference` executable.
    let noOpReferencePath: String

    init(contacts: String, noOpReferencePath: String, server: ServerProcess, count: Int) throws {
        self.count = count
        self.noOpReferencePath = noOpReferencePath
        commands = try ContactsCommands(
            contacts: contacts, server: server.baseURL, serverCPU: { server.cpuSeconds() }, name: "contacts-bench")
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
        // A few tens of milliseconds, mostly starting a process: one run says little, so the median of five,
        // each run beside one of the app's start alone and one of the no-op's reference, so that the three
        // medians come from the same minutes.
        var noOps: [[Step]] = [[], [], []]
        for _ in 0..<5 {
            noOps[0].append(try commands.timed(Self.noOp, "B", ["sync"]))
            noOps[1].append(try commands.timedProgram(Self.appStart, [commands.contacts, "--version"]))
            noOps[2].append(
                try commands.timedProgram(
                    Self.noOpReference, [noOpReferencePath, "--server", commands.server, "--store", deviceFile("B")]))
        }
        steps += noOps.map(ContactsCommands.median)

        // Three commands of a few tens of milliseconds each: one round says as little as one no-op, so five
        // rounds, each with an edit of its own, and the median of each step and of the rounds' totals.
        let id = try commands.firstContactID("A")
        var rounds: [(edit: Step, send: Step, fetch: Step)] = []
        for round in 1...5 {
            rounds.append(
                (
                    try commands.timed(
                        "edit one on A (--no-sync, median of 5)", "A",
                        ["edit", id, "--note", "edited \(round)", "--no-sync"]),
                    try commands.timed("sync A (the edit, median of 5)", "A", ["sync"]),
                    try commands.timed("sync B (the edit, median of 5)", "B", ["sync"])
                ))
        }
        steps += [rounds.map(\.edit), rounds.map(\.send), rounds.map(\.fetch)].map(ContactsCommands.median)
        steps.append(
            ContactsCommands.median(
                rounds.map { round in
                    Step(
                        name: ContactsBenchmark.editRound,
                        seconds: round.edit.seconds + round.send.seconds + round.fetch.seconds,
                        peakKiB: max(round.edit.peakKiB, round.send.peakKiB, round.fetch.peakKiB))
                }))

        let shown = try commands.command("B", ["show", id]).output
        guard shown.contains("edited 5") else { throw ValidationError("device B did not get the last edit: \(shown)") }
        // Every contact out of B, each command's output going to a file as it would to a pipe.
        steps.append(try commands.timed(ContactsBenchmark.listAll, "B", ["list"], contacts: count))
        let listed = try commands.outputLineCount()
        guard listed == count else { throw ValidationError("device B lists \(listed) contacts, expected \(count)") }
        steps.append(try commands.timed(ContactsBenchmark.exportAll, "B", ["export"], contacts: count))
        return steps
    }
}
