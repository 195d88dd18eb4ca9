import ArgumentParser
import Foundation

/// `sync-bench compare NEW --baseline BASE`: each figure of a run beside the saved baseline's, and a
/// failure when one got worse beyond the baseline's own noise.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compares a run's results (--json) with a saved baseline; exits 1 when a figure regressed.",
        discussion: """
            A figure regressed when its median is worse than the baseline's by more than the baseline's \
            noise (twice the spread of its runs, relative to its median, and at least 10% for times and \
            rates, 5% for memory and sizes) and also worse than the baseline's worst run. Figures only \
            one side has are listed, not judged. Run a flagged figure again before trusting it: the \
            machine is shared.
            """)

    @Argument(help: "The results of the run to judge (sync-bench … --json FILE).")
    var results: String

    @Option(help: "The saved results to compare with.")
    var baseline: String

    /// How one figure compares.
    struct Verdict: Equatable {
        /// How much worse the new median is, as a fraction of the baseline's (negative: better).
        var worse: Double
        /// The largest change taken as noise.
        var noise: Double
        var regressed: Bool
    }

    static func verdict(new: BenchResults.Figure, base: BenchResults.Figure) -> Verdict {
        let (newMedian, baseMedian) = (new.median, base.median)
        let worse =
            new.better == .lower ? newMedian / baseMedian - 1 : baseMedian / max(newMedian, .leastNonzeroMagnitude) - 1
        let spread = ((base.runs.max() ?? baseMedian) - (base.runs.min() ?? baseMedian)) / baseMedian
        let floor = ["MB", "B", "KiB", "×"].contains(base.unit) ? 0.05 : 0.10
        let noise = max(floor, 2 * spread)
        let beyondWorstRun =
            new.better == .lower
            ? newMedian > (base.runs.max() ?? baseMedian) : newMedian < (base.runs.min() ?? baseMedian)
        return Verdict(worse: worse, noise: noise, regressed: worse > noise && beyondWorstRun)
    }

    func run() throws {
        let new = try BenchResults.load(results)
        let base = try BenchResults.load(baseline)
        if new.machine != base.machine {
            print(
                "note: the baseline was measured on another machine (\(base.machine.cores) × \(base.machine.cpu)); read the comparison with care"
            )
        }
        let baseFigures = Dictionary(base.figures.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var regressions: [String] = []
        print("| figure | baseline | this run | worse by | |")
        print("| --- | ---: | ---: | ---: | --- |")
        for figure in new.figures {
            guard let old = baseFigures[figure.id] else {
                print("| \(figure.id) | – | \(Self.format(figure.median)) \(figure.unit) | | new |")
                continue
            }
            let verdict = Self.verdict(new: figure, base: old)
            let label =
                verdict.regressed
                ? "**regressed** (noise ±\(Int(verdict.noise * 100))%)"
                : verdict.worse < -verdict.noise ? "better" : "within noise"
            if verdict.regressed { regressions.append(figure.id) }
            let change = (verdict.worse >= 0 ? "+" : "") + String(format: "%.0f%%", verdict.worse * 100)
            print(
                "| \(figure.id) | \(Self.format(old.median)) \(old.unit) | \(Self.format(figure.median)) \(figure.unit) | \(change) | \(label) |"
            )
        }
        for id in baseFigures.keys.sorted() where !new.figures.contains(where: { $0.id == id }) {
            print("| \(id) | \(Self.format(baseFigures[id]!.median)) | – | | not measured |")
        }
        guard regressions.isEmpty else {
            print("\n\(regressions.count) figure(s) regressed: \(regressions.joined(separator: ", "))")
            throw ExitCode(1)
        }
        print("\nno figure regressed beyond its noise")
    }

    static func format(_ value: Double) -> String {
        value >= 100 ? String(Int(value.rounded())) : String(format: value >= 1 ? "%.2f" : "%.4g", value)
    }
}
