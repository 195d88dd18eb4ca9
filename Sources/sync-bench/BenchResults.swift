import ArgumentParser
import BuildInfo
import Foundation
import SyncTesting

/// `--json FILE`, which the benchmarks that save their figures share.
struct SavingOptions: ParsableArguments {
    @Option(
        help: .init(
            "Save the figures as JSON (for sync-bench compare, and for sync-bench report when saved in benchmarks/results).",
            valueName: "file"))
    var json: String?
}

/// The figures of one benchmark run, saved as JSON by `--json FILE` (one file per suite and
/// machine, kept in git as the baseline) and compared by `sync-bench compare`.
struct BenchResults: Codable {
    /// One figure: every run of it, its median, and which way is better.
    struct Figure: Codable {
        enum Better: String, Codable {
            case lower, higher
        }

        /// Names the figure for comparisons: `contacts.10000.upload.seconds`.
        var id: String
        /// What the table calls it.
        var name: String
        var unit: String
        var better: Better
        var runs: [Double]
        /// The target, when there is one (a benchmark prints whether it is met; nothing fails on it).
        var target: Double?

        var median: Double {
            let sorted = runs.sorted()
            guard !sorted.isEmpty else { return .nan }
            return sorted.count % 2 == 1
                ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
    }

    /// Where it ran: figures from different machines are not compared.
    struct Machine: Codable, Equatable {
        var cores: Int
        var cpu: String
        var memoryMiB: Int
        var kernel: String

        static var current: Machine {
            let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
            let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
                .flatMap { $0.split(separator: ":", maxSplits: 1).last }
                .map { $0.trimmingCharacters(in: .whitespaces) }
            let release = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? "unknown"
            return Machine(
                cores: ProcessInfo.processInfo.activeProcessorCount, cpu: model ?? "unknown",
                memoryMiB: Int(ProcessInfo.processInfo.physicalMemory / 1_048_576),
                kernel: release.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    var suite: String
    var date: String
    var command: String
    /// `sync-bench 0.3.0 (commit …)`: the build measured (with the programs it ran first, ``measuring(_:)``).
    var build: String
    var machine: Machine
    /// The load average (1 minute) before and after: a busy machine's figures are read as such.
    var loadBefore: Double
    var loadAfter: Double
    var figures: [Figure]

    /// Results for `suite`, begun now.
    init(suite: String) {
        self.suite = suite
        date = ISO8601DateFormatter().string(from: Date())
        command = CommandLine.arguments.joined(separator: " ")
        build = BuildInfo.versionLine(of: "sync-bench")
        machine = .current
        loadBefore = Self.loadAverage
        loadAfter = loadBefore
        figures = []
    }

    /// Names the programs the benchmark runs before its own build: `contacts 0.3.0 (commit …); sync-server
    /// …; sync-bench …`. The programs measured may be another build than the benchmark's (the packaged,
    /// static one), and the saved results say which. A program that does not answer `--version` is named
    /// by its path.
    mutating func measuring(_ programs: [String]) {
        let lines = programs.map { path in
            let answer = try? ChildProcess.runBlocking([path, "--version"])
            let line = answer?.output.split(separator: "\n").first.map(String.init) ?? ""
            return answer?.status == 0 && !line.isEmpty ? line : path
        }
        build = (lines + [BuildInfo.versionLine(of: "sync-bench")]).joined(separator: "; ")
    }

    static var loadAverage: Double {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return Double(text.split(separator: " ").first ?? "") ?? 0
    }

    mutating func add(
        _ id: String, name: String, unit: String, better: Figure.Better, runs: [Double], target: Double? = nil
    ) {
        figures.append(Figure(id: id, name: name, unit: unit, better: better, runs: runs, target: target))
    }

    /// Writes the results to `path` (when given), sorted keys, one figure per line's worth of JSON.
    mutating func save(to path: String?) throws {
        loadAfter = Self.loadAverage
        guard let path else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
        print("results saved to \(path)")
    }

    static func load(_ path: String) throws -> BenchResults {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read \(path): no such file, or not readable")
        }
        do {
            return try JSONDecoder().decode(BenchResults.self, from: data)
        } catch {
            throw ValidationError("\(path) is not a sync-bench results file: \(error)")
        }
    }
}
