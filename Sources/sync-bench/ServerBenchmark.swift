import ArgumentParser
import BuildInfo
import Foundation
import SyncCore
import SyncTesting

/// Measures the record server over loopback: saves N small records in batches, then fetches them
/// back through zone changes, and prints records per second each way and the server's peak memory.
///
/// The server is the real `sync-server` executable, started as a separate process so that its
/// memory is measured alone. Build both in release mode first: `swift build -c release`.
@main
struct SyncBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-bench",
        abstract: "Benchmarks of the record server, the sync engine and the contacts TUI, printed as tables.",
        version: BuildInfo.versionLine(of: "sync-bench"),
        subcommands: [
            ServerBenchmark.self, InstancesBenchmark.self, EngineBenchmark.self, ContactsBenchmark.self,
            TUIBenchmark.self,
            FieldsBenchmark.self, ZoneDeleteBenchmark.self, AssetsBenchmark.self, DAVBenchmark.self,
            SoakBenchmark.self, CompareCommand.self, ReportCommand.self,
        ],
        defaultSubcommand: ServerBenchmark.self)
}

struct ServerBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Record server: upload and download throughput and peak memory.")

    @Option(help: "How many records to save and fetch.")
    var records = 10_000

    @Option(help: "Records per modify request (the server allows 400).")
    var batch = 400

    @Option(help: "Results per fetch page.")
    var page = 400

    @Option(help: "Path of the sync-server executable (default: next to this one).")
    var server: String?

    @Option(help: "How many times to run; the table shows each run and the median.")
    var runs = 3

    @OptionGroup var saving: SavingOptions

    /// One run's figures: records a second each way, the server's peak, and the CPU seconds each side
    /// spent per 1,000 records (the client's JSON work is in the rates, so it is printed apart).
    struct Measurement {
        var upload: Double
        var download: Double
        var peakKiB: Int
        var uploadCPU: CPUSplit
        var downloadCPU: CPUSplit
    }

    /// CPU seconds each side spent in one phase.
    struct CPUSplit {
        var client: Double
        var server: Double
    }

    func run() async throws {
        let executable =
            server
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("sync-server").path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ValidationError(
                "no sync-server at \(executable); run `swift build -c release` first or pass --server")
        }
        print("sync-bench: \(records) records, batches of \(batch), fetch pages of \(page), \(runs) runs")
        print(
            "run  upload rec/s  download rec/s  server peak RSS  CPU s per 1,000 up (client/server)  down (client/server)"
        )
        var measurements: [Measurement] = []
        var results = BenchResults(suite: "server")
        let perThousand = 1000 / Double(records)
        for run in 1...runs {
            let result = try await measure(executable: executable)
            measurements.append(result)
            print(
                String(
                    format: "%3d  %12.0f  %14.0f  %11.1f MiB  %17.3f / %.3f  %20.3f / %.3f", run, result.upload,
                    result.download, Double(result.peakKiB) / 1024, result.uploadCPU.client * perThousand,
                    result.uploadCPU.server * perThousand, result.downloadCPU.client * perThousand,
                    result.downloadCPU.server * perThousand))
        }
        func median<T: Comparable>(_ values: [T]) -> T { values.sorted()[values.count / 2] }
        print(
            String(
                format: "med  %12.0f  %14.0f  %11.1f MiB", median(measurements.map(\.upload)),
                median(measurements.map(\.download)), Double(median(measurements.map(\.peakKiB))) / 1024))
        let id = "server.sqlite.\(records)"
        results.add(
            id + ".upload.recordsPerSecond", name: "upload, records/s", unit: "records/s", better: .higher,
            runs: measurements.map(\.upload), target: 50_000)
        results.add(
            id + ".download.recordsPerSecond", name: "download, records/s", unit: "records/s", better: .higher,
            runs: measurements.map(\.download), target: 100_000)
        results.add(
            id + ".peakMB", name: "server peak RSS", unit: "MB", better: .lower,
            runs: measurements.map { Double($0.peakKiB) / 1024 })
        for (phase, cpu) in [("upload", \Measurement.uploadCPU), ("download", \Measurement.downloadCPU)] {
            for (side, seconds) in [("server", \CPUSplit.server), ("client", \CPUSplit.client)] {
                results.add(
                    id + ".\(phase).\(side)CPUPerThousand", name: "\(phase), \(side) CPU s per 1,000 records",
                    unit: "s", better: .lower,
                    runs: measurements.map { $0[keyPath: cpu][keyPath: seconds] * perThousand })
            }
        }
        try results.save(to: saving.json)
    }

    private func measure(executable: String) async throws -> Measurement {
        let process = try await ServerProcess.start(executable: executable)
        defer { process.stop() }

        let ada = try await TestClient(baseURL: process.baseURL).signedUp(username: "bench")
        let zone = RecordZone.ID(zoneName: "Contacts")
        _ = try await ada.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: zone)]))
        let all = (0..<records).map { index -> RecordValue in
            var record = BenchSupport.contactRecord(index, zone: zone)
            record["modified"] = .date(Date())
            return record
        }

        var cpu = CPUReading(server: process)
        let uploadStart = ContinuousClock.now
        for start in stride(from: 0, to: all.count, by: batch) {
            let response = try await ada.modifyRecords(
                ModifyRecordsRequest(saves: Array(all[start..<min(start + batch, all.count)])))
            guard response.failedRecordSaves.isEmpty else {
                throw ValidationError("a save failed: \(response.failedRecordSaves[0].error)")
            }
        }
        let uploadTime = ContinuousClock.now - uploadStart
        let uploadCPU = cpu.next()

        let downloadStart = ContinuousClock.now
        let fetched = try await ada.fetchAllZoneChanges(zone, resultsLimit: page)
        let downloadTime = ContinuousClock.now - downloadStart
        let downloadCPU = cpu.next()
        guard fetched.modifications.count == records else {
            throw ValidationError("fetched \(fetched.modifications.count) records, expected \(records)")
        }
        return Measurement(
            upload: Double(records) / uploadTime.inSeconds, download: Double(records) / downloadTime.inSeconds,
            peakKiB: process.peakResidentKiB(),
            uploadCPU: CPUSplit(client: uploadCPU.devices, server: uploadCPU.server),
            downloadCPU: CPUSplit(client: downloadCPU.devices, server: downloadCPU.server))
    }
}

extension ServerProcess {
    /// The given path, or the `sync-server` built next to this executable.
    static func executable(_ path: String?) throws -> String {
        try BenchSupport.executable(path, named: "sync-server", option: "server")
    }

    /// The server's peak resident memory, in KiB.
    func peakResidentKiB() -> Int {
        BenchSupport.peakResidentKiB(of: String(pid))
    }

    /// The CPU time (user and system) the server has used so far, in seconds.
    func cpuSeconds() -> Double {
        BenchSupport.cpuSeconds(of: String(pid))
    }
}
