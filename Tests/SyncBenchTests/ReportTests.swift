import ArgumentParser
import Foundation
import Testing

@testable import sync_bench

/// `sync-bench report`: the docs' marked tables come from the saved results, and nothing else changes.
@Suite("sync-bench report")
struct ReportTests {
    static var results: BenchResults {
        var results = BenchResults(suite: "contacts")
        results.date = "2026-11-27T10:00:00Z"
        results.command = "/work/main/.build/release/sync-bench contacts --counts 1000 --json x.json"
        results.build = "sync-bench 0.3.0 (commit 0123456789ab)"
        results.machine = .init(cores: 2, cpu: "Test CPU", memoryMiB: 8192, kernel: "6.1.0")
        results.loadBefore = 0.25
        results.loadAfter = 1.5
        results.add(
            "contacts.1000.upload.seconds", name: "1000: sync A (upload)", unit: "s", better: .lower,
            runs: [0.2, 0.1, 0.3], target: 0.1)
        results.add(
            "contacts.1000.noop.seconds", name: "1000: no-op", unit: "s", better: .lower, runs: [0.02],
            target: 0.03)
        return results
    }

    let document = """
        # Benchmarks

        Hand-written prose stays.

        <!-- sync-bench report: contacts-1k contacts.1000.noop.* -->
        an old table
        <!-- end sync-bench report -->

        More prose.
        """

    @Test("a marked table is filled with the chosen figures, provenance and targets; the prose is kept")
    func fills() throws {
        let filled = try ReportCommand.fill(
            document, with: ["contacts-1k": Self.results], resultsDirectory: "benchmarks/results", document: "B.md")
        #expect(!filled.contains("an old table"))
        #expect(filled.contains("Hand-written prose stays.") && filled.hasSuffix("More prose."))
        #expect(filled.contains("| 1000: no-op | 20 ms | 20 | ≤ 30 ms: met |"), "seconds under one as milliseconds")
        #expect(!filled.contains("upload"), "only the figures the marker names")
        #expect(filled.contains("Measured 2026-11-27 on 2 cores (Test CPU, 8 GiB, Linux 6.1.0)"))
        #expect(filled.contains("`sync-bench contacts --counts 1000`"), "the command, without where it was saved")
        #expect(filled.contains("sync-bench 0.3.0 (commit 0123456789ab)"))
        #expect(filled.contains("saved in `benchmarks/results/contacts-1k.json`"))
        let again = try ReportCommand.fill(
            filled, with: ["contacts-1k": Self.results], resultsDirectory: "benchmarks/results", document: "B.md")
        #expect(again == filled, "filling twice changes nothing, so --check passes after a report")
    }

    @Test("a star matches any run of characters, in the middle of a pattern too; a pattern matching nothing is refused")
    func patterns() throws {
        let middle = document.replacingOccurrences(of: "contacts.1000.noop.*", with: "contacts.*.seconds")
        let filled = try ReportCommand.fill(
            middle, with: ["contacts-1k": Self.results], resultsDirectory: "r", document: "B.md")
        #expect(filled.contains("| 1000: no-op |") && filled.contains("| 1000: sync A (upload) |"))
        let typo = document.replacingOccurrences(of: "contacts.1000.noop.*", with: "contacts.*.perSecond")
        do {
            _ = try ReportCommand.fill(
                typo, with: ["contacts-1k": Self.results], resultsDirectory: "r", document: "B.md")
            Issue.record("a pattern matching no figure was accepted")
        } catch let error as ValidationError {
            #expect(error.message.contains("B.md, line 5"), "\(error.message)")
            #expect(error.message.contains("'contacts.*.perSecond' matches no figure of r/contacts-1k.json"))
        }
    }

    @Test(
        "the header names the build and the command as typed in a clone, with no directory of the machine that measured"
    )
    func noMachinePaths() {
        var results = Self.results
        results.command =
            "/work/main/.build/release/sync-bench contacts --counts 1000000 --contacts /work/build-static/release/contacts --server /work/build-static/release/sync-server --keep-data --json /tmp/x.json"
        let header = ReportCommand.render(results, file: "r.json", only: [])[1]
        #expect(!header.contains("/work"), "\(header)")
        #expect(
            header.contains(
                "the static build (`swift build -c release --static-swift-stdlib`); `sync-bench contacts --counts 1000000 --contacts .build/release/contacts --server .build/release/sync-server --keep-data`"
            ), "\(header)")
        results.command =
            "/opt/bench/sync-bench tui --device /work/bench1m/contacts-bench-90917BB9/data/devices/B.sqlite --search fatima sm"
        let tui = ReportCommand.render(results, file: "r.json", only: [])[1]
        #expect(tui.contains("`sync-bench tui --device …/devices/B.sqlite --search fatima sm`"), "\(tui)")
        #expect(!tui.contains("build ("), "no build named when the command names no program: \(tui)")
        results.command = "sync-bench server --contacts /home/me/src/.build/debug/contacts"
        #expect(ReportCommand.render(results, file: "r.json", only: [])[1].contains("the debug build (`swift build`)"))
    }

    @Test("a target not met says so; the median of the runs is shown")
    func targetNotMet() throws {
        let lines = ReportCommand.render(Self.results, file: "r.json", only: [])
        #expect(lines.contains("| 1000: sync A (upload) | 200 ms | 200, 100, 300 | ≤ 100 ms: **not met** |"))
    }

    @Test("a marker naming results that are not saved, or with no end, is refused saying where")
    func badMarkers() {
        #expect(throws: ValidationError.self) {
            try ReportCommand.fill(document, with: [:], resultsDirectory: "r", document: "B.md")
        }
        let unended = "x\n<!-- sync-bench report: contacts-1k -->\nrows\n"
        do {
            _ = try ReportCommand.fill(
                unended, with: ["contacts-1k": Self.results], resultsDirectory: "r", document: "B.md")
            Issue.record("an unended marker was accepted")
        } catch let error as ValidationError {
            #expect(error.message.contains("B.md, line 2"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}
