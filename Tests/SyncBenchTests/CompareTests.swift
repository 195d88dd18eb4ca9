import Foundation
import SyncTesting
import Testing

@testable import sync_bench

/// `sync-bench compare`: a figure regressed only when it moved past the baseline's noise and its worst run.
@Suite("sync-bench compare")
struct CompareTests {
    static func figure(_ runs: [Double], unit: String = "s", better: BenchResults.Figure.Better = .lower)
        -> BenchResults.Figure
    {
        BenchResults.Figure(id: "x", name: "x", unit: unit, better: better, runs: runs)
    }

    @Test("a time within the baseline's spread, or better, is not a regression")
    func withinNoise() {
        let base = Self.figure([1.00, 1.10, 1.30])
        #expect(!CompareCommand.verdict(new: Self.figure([1.25]), base: base).regressed)
        #expect(!CompareCommand.verdict(new: Self.figure([0.50]), base: base).regressed)
        #expect(CompareCommand.verdict(new: Self.figure([0.50]), base: base).worse < 0)
    }

    @Test("a time past the noise and past the worst run regressed; a noisy baseline needs a larger move")
    func regression() {
        let steady = Self.figure([1.00, 1.01, 1.02])
        let verdict = CompareCommand.verdict(new: Self.figure([1.20, 1.25, 1.22]), base: steady)
        #expect(verdict.regressed)
        #expect(abs(verdict.noise - 0.10) < 1e-9, "the floor for times: \(verdict.noise)")
        let noisy = Self.figure([1.00, 1.40, 1.80])
        #expect(!CompareCommand.verdict(new: Self.figure([1.70]), base: noisy).regressed)
    }

    @Test("rates are better higher; sizes have a 5% floor")
    func directionsAndFloors() {
        let rate = Self.figure([50_000, 51_000], unit: "records/s", better: .higher)
        #expect(
            CompareCommand.verdict(new: Self.figure([40_000], unit: "records/s", better: .higher), base: rate).regressed
        )
        #expect(
            !CompareCommand.verdict(new: Self.figure([60_000], unit: "records/s", better: .higher), base: rate)
                .regressed)
        let size = Self.figure([100], unit: "MB")
        #expect(CompareCommand.verdict(new: Self.figure([106], unit: "MB"), base: size).regressed)
        #expect(!CompareCommand.verdict(new: Self.figure([104], unit: "MB"), base: size).regressed)
    }

    @Test("results survive a save and a load; a file that is not results is refused, naming it")
    func saveAndLoad() throws {
        var results = BenchResults(suite: "contacts")
        results.add(
            "contacts.1000.upload.seconds", name: "upload", unit: "s", better: .lower, runs: [0.2, 0.3, 0.25],
            target: 0.1)
        let path = TemporaryFiles.path("bench", extension: "json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try results.save(to: path)
        let loaded = try BenchResults.load(path)
        #expect(loaded.figures.first?.median == 0.25)
        #expect(loaded.figures.first?.target == 0.1)
        #expect(loaded.machine == .current)
        #expect(loaded.build.hasPrefix("sync-bench "))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: (any Error).self) { try BenchResults.load(path) }
    }
}
