import ArgumentParser
import Foundation

/// `sync-bench report`: writes the saved results (`benchmarks/results/*.json`) into the docs, between
/// markers, so that the figures a reader sees are the ones measured, with when, where, which build and
/// which command; `--check` says whether the docs are current (CI runs it).
///
/// A marker names a results file (without `.json`) and, optionally, which figures to show (IDs, `*` in one
/// matching any run of characters); everything up to the end marker is replaced, and a pattern that matches
/// no figure is refused:
///
///     <!-- sync-bench report: contacts-1m contacts.1000000.* -->
///     <!-- end sync-bench report -->
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Writes the saved benchmark results into the docs' marked tables; --check says if they are current.",
        discussion: """
            Each results file (sync-bench contacts|server|instances|tui … --json FILE) saved in the results directory \
            fills the tables of the documents that name it in a marker: <!-- sync-bench report: NAME \
            [FIGURE-ID…] --> … <!-- end sync-bench report -->. Save a new run over the file, run this, \
            and commit both.
            """)

    @Option(help: "The directory of saved results.")
    var results = "benchmarks/results"

    @Option(parsing: .upToNextOption, help: "The documents whose marked tables are filled.")
    var documents = ["docs/BENCHMARKS.md", "README.md", "docs/OPERATIONS.md"]

    @Flag(help: "Change nothing; exit 1 when a document's tables differ from the saved results.")
    var check = false

    func run() throws {
        let saved = try Self.loadResults(in: results)
        var stale: [String] = []
        for path in documents {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ValidationError("cannot read \(path): run sync-bench report from the repository's root")
            }
            let filled = try Self.fill(text, with: saved, resultsDirectory: results, document: path)
            guard filled != text else { continue }
            if check {
                stale.append(path)
            } else {
                try filled.write(toFile: path, atomically: true, encoding: .utf8)
                print("updated \(path)")
            }
        }
        if !stale.isEmpty {
            print(
                "out of date with \(results): \(stale.joined(separator: ", ")); run `sync-bench report` and commit the result"
            )
            throw ExitCode(1)
        }
        if check { print("the docs' benchmark tables match \(results)") }
    }

    /// Every results file in `directory`, by name without `.json`.
    static func loadResults(in directory: String) throws -> [String: BenchResults] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw ValidationError("cannot read the results directory \(directory)")
        }
        var saved: [String: BenchResults] = [:]
        for name in names.sorted() where name.hasSuffix(".json") {
            saved[String(name.dropLast(5))] = try BenchResults.load("\(directory)/\(name)")
        }
        return saved
    }

    static let startPrefix = "<!-- sync-bench report:"
    static let end = "<!-- end sync-bench report -->"

    /// `text` with every marked table filled from `saved`; a marker naming results that do not exist, or
    /// without its end, is an error that says where.
    static func fill(
        _ text: String, with saved: [String: BenchResults], resultsDirectory: String, document: String
    ) throws -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var index = 0
        while index < lines.count {
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix(startPrefix), line.hasSuffix("-->") else {
                index += 1
                continue
            }
            let words = line.dropFirst(startPrefix.count).dropLast(3).split(separator: " ").map(String.init)
            guard let name = words.first, let results = saved[name] else {
                throw ValidationError(
                    "\(document), line \(index + 1): the marker names results \(resultsDirectory) does not have (\(words.first ?? "none"))"
                )
            }
            guard
                let endIndex = lines[(index + 1)...].firstIndex(where: {
                    $0.trimmingCharacters(in: .whitespaces) == end
                })
            else {
                throw ValidationError("\(document), line \(index + 1): no \(end) after the marker")
            }
            let patterns = Array(words.dropFirst())
            // A pattern that shows nothing is a typo; an empty table would pass --check for ever.
            if let idle = patterns.first(where: { pattern in !results.figures.contains { matches($0.id, pattern) } }) {
                throw ValidationError(
                    "\(document), line \(index + 1): '\(idle)' matches no figure of \(resultsDirectory)/\(name).json")
            }
            let table = render(results, file: "\(resultsDirectory)/\(name).json", only: patterns)
            lines.replaceSubrange((index + 1)..<endIndex, with: table)
            index += table.count + 2
        }
        return lines.joined(separator: "\n")
    }

    /// Whether a figure's ID matches a marker's pattern: the ID itself, or with `*` standing for any run of
    /// characters (`instances.*.perSecond`).
    static func matches(_ id: String, _ pattern: String) -> Bool {
        fnmatch(pattern, id, 0) == 0
    }

    /// The table of `results`' figures (those `patterns` match, or all), under a line saying when, where,
    /// with which build and command they were measured.
    static func render(_ results: BenchResults, file: String, only patterns: [String]) -> [String] {
        func matches(_ id: String) -> Bool {
            patterns.isEmpty || patterns.contains { Self.matches(id, $0) }
        }
        let machine = results.machine
        let day = results.date.prefix(10)
        var lines = [
            "",
            "Measured \(day) on \(machine.cores) cores (\(machine.cpu), \(machine.memoryMiB / 1024) GiB, Linux \(machine.kernel)), load \(format(results.loadBefore)) before and \(format(results.loadAfter)) after; \(results.build)\(buildName(results.command).map { ", " + $0 } ?? ""); `\(displayed(results.command))`; saved in `\(file)`.",
            "",
            "| figure | median | runs | target |",
            "| --- | ---: | ---: | --- |",
        ]
        for figure in results.figures where matches(figure.id) {
            // Seconds under one read better as milliseconds.
            let (scale, unit) = figure.unit == "s" && figure.median < 1 ? (1000.0, "ms") : (1.0, figure.unit)
            let runs = figure.runs.map { format($0 * scale) }.joined(separator: ", ")
            var target = ""
            if let goal = figure.target {
                let met = figure.better == .lower ? figure.median <= goal : figure.median >= goal
                let bound = figure.better == .lower ? "≤" : "≥"
                target = "\(bound) \(format(goal * scale)) \(unit): \(met ? "met" : "**not met**")"
            }
            lines.append("| \(figure.name) | \(format(figure.median * scale)) \(unit) | \(runs) | \(target) |")
        }
        lines.append("")
        return lines
    }

    /// The command as a reader would type it in a clone of the project, with no directory of the machine
    /// that measured: the program's own path becomes `sync-bench`; a program from a build directory
    /// becomes that build's path in a clone (`/work/build-static/release/contacts` → `.build/release/contacts`);
    /// any other absolute path keeps its last two parts (`…/devices/B.sqlite`); where the run was saved
    /// (`--json FILE`) is left out.
    static func displayed(_ command: String) -> String {
        var words = command.split(separator: " ").map(String.init)
        if let first = words.first, first.hasSuffix("sync-bench") { words[0] = "sync-bench" }
        if let json = words.firstIndex(of: "--json") { words.removeSubrange(json..<min(words.count, json + 2)) }
        return words.map { word in
            guard word.hasPrefix("/") else { return word }
            let parts = word.split(separator: "/")
            if parts.count >= 2,
                let configuration = ["release", "debug"].first(where: { $0 == parts[parts.count - 2] })
            {
                return ".build/\(configuration)/\(parts[parts.count - 1])"
            }
            return "…/" + parts.suffix(2).joined(separator: "/")
        }.joined(separator: " ")
    }

    /// Which build the command's programs came from, as the docs name it: "the static build" when a program's
    /// directory says so (`swift build -c release --static-swift-stdlib`, as the packages are built), else
    /// "the release build" or "the debug build"; nil when its arguments name no program of a build directory
    /// (sync-bench's own path, the first word, says nothing of what was measured).
    static func buildName(_ command: String) -> String? {
        let directories = command.split(separator: " ").dropFirst().filter { $0.hasPrefix("/") }.map {
            $0.split(separator: "/").dropLast()
        }
        guard let build = directories.first(where: { $0.last == "release" || $0.last == "debug" }) else { return nil }
        if build.contains(where: { $0.contains("static") }) {
            return "the static build (`swift build -c release --static-swift-stdlib`)"
        }
        return build.last == "release"
            ? "the release build (`swift build -c release`)" : "the debug build (`swift build`)"
    }

    /// Three significant digits, whole numbers from 100 up: 0.628, 32.7, 92.8, 123, 60620.
    static func format(_ value: Double) -> String {
        value >= 100 ? String(Int(value.rounded())) : String(format: "%.3g", value)
    }
}
