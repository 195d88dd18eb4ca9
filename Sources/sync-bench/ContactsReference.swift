import ArgumentParser
import Foundation
import SyncTesting

/// What the machine allows for the bulk steps of a `sync-bench contacts` count, measured in the same run right
/// after them (the same machine, the same load), on the same contacts: the figure each step is held to, at most
/// three times it.
///
/// - import ≈ parsing the same vCard file + inserting the same rows into SQLite;
/// - upload ≈ reading those rows back + sealing the same fields with AES-GCM + sending the same bytes over
///   loopback HTTP + the server inserting the rows it stores for them;
/// - first download ≈ the server reading those rows a page at a time + receiving the same bytes over loopback
///   HTTP + opening the same fields + inserting the same rows a page at a time.
///
/// Each part is bare: the project's own parser, SQLite, swift-crypto's AES-GCM and a plain HTTP server, with
/// none of the app's or the server's work around them (``ContactsReferenceCommand``, ``RecordedTraffic``,
/// ``ContactsRowsReference``, ``SealedFieldsReference``, ``ServerRowsReference`` say what each measures).
/// Every part is measured three times and its median kept.
struct ContactsReference: Codable {
    /// Seconds of each run of each part.
    var parse: [Double] = []
    var importInsert: [Double] = []
    var read: [Double] = []
    var seal: [Double] = []
    var httpUp: [Double] = []
    var httpDown: [Double] = []
    var open: [Double] = []
    var downloadInsert: [Double] = []
    var serverInsert: [Double] = []
    var serverRead: [Double] = []
    /// What the upload and the download moved.
    var up: RecordedTraffic.Totals
    var down: RecordedTraffic.Totals
    var sealedFields: Int

    /// One part of a step's reference, for the table and the saved figures.
    struct Part {
        var key: String
        var name: String
        /// What the table says beside the name (not saved: it may change from run to run).
        var detail = ""
        var runs: [Double]
        /// The median run (the upper one of an even count).
        var seconds: Double { runs.isEmpty ? .nan : BenchSupport.percentile(runs.sorted(), 50) }
    }

    /// The steps that have a reference: their keys in the saved figures (``ContactsBenchmark/record``) and names.
    static let steps = [
        ("import", "import on A (--no-sync)"), ("upload", "sync A (upload)"), ("download", "sync B (first download)"),
    ]

    /// The parts of the step whose key is `step` (one of ``steps``).
    func parts(of step: String) -> [Part] {
        func megabytes(_ bytes: Int) -> String { String(format: "%.2f MB", Double(bytes) / 1_048_576) }
        func traffic(_ totals: RecordedTraffic.Totals) -> String {
            "\(totals.requests) requests, \(megabytes(totals.sent)) sent, \(megabytes(totals.received)) received"
        }
        let fields = "\(sealedFields) fields"
        switch step {
        case "import":
            return [
                Part(key: "parse", name: "parse", runs: parse),
                Part(
                    key: "sqliteInsert", name: "SQLite insert",
                    detail: "\(ContactsReferenceCommand.importBatch) rows a transaction", runs: importInsert),
            ]
        case "upload":
            return [
                Part(key: "sqliteRead", name: "SQLite read", runs: read),
                Part(key: "aesSeal", name: "AES-GCM seal", detail: fields, runs: seal),
                Part(key: "httpUp", name: "HTTP up", detail: traffic(up), runs: httpUp),
                Part(
                    key: "serverInsert", name: "the server's SQLite insert", detail: "a transaction a request",
                    runs: serverInsert),
            ]
        default:
            return [
                Part(
                    key: "serverRead", name: "the server's SQLite read",
                    detail: "\(ServerRowsReference.page) rows a read", runs: serverRead),
                Part(key: "httpDown", name: "HTTP down", detail: traffic(down), runs: httpDown),
                Part(key: "aesOpen", name: "AES-GCM open", detail: fields, runs: open),
                Part(
                    key: "sqliteInsertPages", name: "SQLite insert by page",
                    detail: "\(ContactsReferenceCommand.downloadPage) rows a transaction", runs: downloadInsert),
            ]
        }
    }

    /// The sum of a step's parts' medians.
    func seconds(of step: String) -> Double {
        parts(of: step).reduce(0) { $0 + $1.seconds }
    }

    /// Measures the reference of `run`'s count in a process of its own (``ContactsReferenceCommand``), on its
    /// vCards and device A's file, with `server` (still the one the run synced with).
    static func measure(_ run: BenchRun, contacts: String, server: String) async throws -> ContactsReference {
        let directory = run.commands.directory
        let output = directory.appendingPathComponent("reference.json").path
        let outcome = try await ChildProcess.run([
            CommandLine.arguments[0], ContactsReferenceCommand.configuration.commandName!,
            "--cards", directory.appendingPathComponent("cards.vcf").path, "--count", "\(run.count)",
            "--device-file", run.deviceFile("A"), "--contacts", contacts, "--server", server, "--output", output,
        ])
        guard outcome.status == 0, let saved = FileManager.default.contents(atPath: output) else {
            throw BenchError(description: "the contacts reference failed: \(outcome.error)\(outcome.output)")
        }
        return try JSONDecoder().decode(ContactsReference.self, from: saved)
    }

    /// Saves each step's reference (the sum), the step's ratio to it (target: at most 3), and every part.
    func record(_ steps: [BenchRun.Step], count: Int, in results: inout BenchResults) {
        for (key, name) in Self.steps {
            guard let step = steps.first(where: { $0.name == name }) else { continue }
            results.add(
                "contacts.\(count).\(key).reference.seconds", name: "\(count): \(name), in-run reference", unit: "s",
                better: .lower, runs: [seconds(of: key)])
            results.add(
                "contacts.\(count).\(key).ratio", name: "\(count): \(name) ÷ its reference", unit: "×",
                better: .lower, runs: [step.seconds / seconds(of: key)], target: 3)
            for part in parts(of: key) {
                results.add(
                    "contacts.\(count).reference.\(part.key).seconds", name: "\(count): reference, \(part.name)",
                    unit: "s", better: .lower, runs: part.runs)
            }
        }
    }

    /// The table of every count's steps beside their references.
    static func printTable(_ measured: [(count: Int, steps: [BenchRun.Step], reference: ContactsReference)]) {
        print("")
        print(
            "In-run references: the same contacts, right after each count's steps, each part bare and the median of 3."
        )
        print("| N | step | time | reference | step ÷ reference (target ≤ 3×) | the reference's parts |")
        print("| ---: | --- | ---: | ---: | ---: | --- |")
        for (count, steps, reference) in measured {
            for (key, name) in Self.steps {
                guard let step = steps.first(where: { $0.name == name }) else { continue }
                let sum = reference.seconds(of: key)
                let parts = reference.parts(of: key).map { part in
                    "\(part.name)\(part.detail.isEmpty ? "" : " (\(part.detail))") \(format(part.seconds))"
                }
                print(
                    "| \(count) | \(name) | \(format(step.seconds)) | \(format(sum)) | "
                        + "\(String(format: "%.1f", step.seconds / sum))× | \(parts.joined(separator: " + ")) |")
            }
        }
    }

    /// Milliseconds with a decimal below 10 ms (a reference's parts are often that short), as the table's
    /// other times otherwise.
    static func format(_ seconds: Double) -> String {
        seconds < 0.01 ? String(format: "%.1f ms", seconds * 1000) : ContactsCommands.format(seconds)
    }
}
