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
            SoakBenchmark.self, TablesBenchmark.self, FailoverBenchmark.self, MoveBenchmark.self, CompareCommand.self,
            ReportCommand.self,
            ReferenceServerCommand.self, ContactsReferenceCommand.self,
        ],
        defaultSubcommand: ServerBenchmark.self)
}

struct ServerBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Record server: upload and download throughput and peak memory.",
        discussion: """
            Beside the server, in the same run: a plain HTTP server answering the same requests with the same \
            bytes, and the storage alone inserting and reading the same rows with the server's own statements. \
            With --storage postgres the server and the reference each get a database of their own on the \
            PostgreSQL that --postgres names (its maintenance database), e.g. `Scripts/with-postgres \
            sync-bench server --storage postgres` (which sets $SYNC_TEST_POSTGRES_URL).
            """)

    /// Where the server stores.
    enum Storage: String, ExpressibleByArgument, CaseIterable {
        case sqlite, postgres

        var name: String { self == .sqlite ? "SQLite" : "PostgreSQL" }
    }

    @Option(help: "How many records to save and fetch, in all.")
    var records = 10_000

    @Option(help: "Clients saving and fetching at once, one account each (the records are shared out).")
    var clients = 1

    @Option(help: "Records per modify request (the server allows 400).")
    var batch = 400

    @Option(help: "Results per fetch page.")
    var page = 400

    @Option(help: "Path of the sync-server executable (default: next to this one).")
    var server: String?

    @Option(help: "Where the server stores: sqlite (a file) or postgres (a database for each run; see --postgres).")
    var storage = Storage.sqlite

    @Option(
        help: "With --storage postgres: a PostgreSQL maintenance database's URL (default: $SYNC_TEST_POSTGRES_URL).")
    var postgres: String?

    @Option(help: "How many times to run; the table shows each run and the median.")
    var runs = 3

    @OptionGroup var saving: SavingOptions

    /// The records sent in all: each client sends as many.
    private var sent: Int { records / clients * clients }

    /// One run's figures: the real server's, the plain HTTP server's answering the same requests with the same
    /// bytes, the storage's alone inserting and reading the same rows, and the real server's peak memory.
    struct Measurement {
        var server: Transfer
        var plainHTTP: Transfer
        var bare: BareStorageReference.Figures
        var peakKiB: Int
    }

    /// Records a second each way, and the CPU seconds each side spent: the client shares the machine's
    /// cores with the server, so its share is printed apart.
    struct Transfer {
        var upload: Double
        var download: Double
        var uploadCPU: CPUTimes
        var downloadCPU: CPUTimes
    }

    func run() async throws {
        let executable = try ServerProcess.executable(server)
        guard clients >= 1, records >= clients, batch >= 1, page >= 1, runs >= 1 else {
            throw ValidationError(
                "--clients, --batch, --page and --runs must be at least 1, and --records at least --clients")
        }
        if let postgres { setenv("SYNC_TEST_POSTGRES_URL", postgres, 1) }
        if storage == .postgres {
            guard TestPostgres.url != nil else {
                throw ValidationError(
                    "no PostgreSQL: pass --postgres URL or run it as `Scripts/with-postgres sync-bench server --storage postgres`"
                )
            }
            // Asked once before anything is measured, so that a wrong address says so, and says it plainly.
            do {
                _ = try await TestPostgres.databases()
            } catch {
                throw BenchError(
                    description:
                        "cannot use the PostgreSQL that --postgres (or $SYNC_TEST_POSTGRES_URL) names: \(error); check that it runs there and takes that user and password"
                )
            }
        }
        print(
            "sync-bench: \(records) records by \(clients) client\(clients == 1 ? "" : "s"), batches of \(batch), "
                + "fetch pages of \(page), \(runs) runs, on \(storage.name)")
        print(
            "run  upload rec/s  download rec/s  server peak RSS  CPU s per 1,000 up (client/server)  down (client/server)"
        )
        // Made first, so that its load before is the machine's before the runs.
        var saved = BenchResults(suite: "server")
        saved.measuring([executable])
        var measurements: [Measurement] = []
        let perThousand = 1000 / Double(sent)
        for run in 1...runs {
            let result = try await measure(executable: executable)
            measurements.append(result)
            let server = result.server
            print(
                String(
                    format: "%3d  %12.0f  %14.0f  %11.1f MiB  %17.3f / %.3f  %20.3f / %.3f", run, server.upload,
                    server.download, Double(result.peakKiB) / 1024, server.uploadCPU.clients * perThousand,
                    server.uploadCPU.servers * perThousand, server.downloadCPU.clients * perThousand,
                    server.downloadCPU.servers * perThousand))
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        func median(_ figure: (Measurement) -> Double) -> Double { median(measurements.map(figure)) }
        print(
            String(
                format: "med  %12.0f  %14.0f  %11.1f MiB", median(\.server.upload), median(\.server.download),
                median { Double($0.peakKiB) / 1024 }))
        print(
            """

            References in the same runs (medians): a plain HTTP server answering the same requests with the \
            same bytes and doing nothing else, and \(storage.name) inserting and reading the same rows, \
            \(storage == .sqlite ? "in this process" : "from this process (its CPU: this process's and PostgreSQL's)").
            """)
        print(
            "                     upload rec/s  download rec/s  CPU s per 1,000 up: server, client  down: server, client"
        )
        for (name, transfer) in [("sync-server", \Measurement.server), ("plain HTTP, no work", \.plainHTTP)] {
            print(
                String(
                    format: "%@ %12.0f  %14.0f  %18.4f, %.4f  %14.4f, %.4f", BenchSupport.padded(name),
                    median { $0[keyPath: transfer].upload }, median { $0[keyPath: transfer].download },
                    median { $0[keyPath: transfer].uploadCPU.servers * perThousand },
                    median { $0[keyPath: transfer].uploadCPU.clients * perThousand },
                    median { $0[keyPath: transfer].downloadCPU.servers * perThousand },
                    median { $0[keyPath: transfer].downloadCPU.clients * perThousand }))
        }
        print(
            String(
                format: "%@ %12.0f  %14.0f  %18.4f (storage)  %.4f", BenchSupport.padded("bare \(storage.name)"),
                median(\.bare.upload), median(\.bare.download), median { $0.bare.uploadCPU * perThousand },
                median { $0.bare.downloadCPU * perThousand }))
        print(
            String(
                format:
                    "sync-server: %.0f%% of plain HTTP's rate up, %.0f%% down; %.0f%% of bare %@'s up, %.0f%% down",
                100 * median(\.server.upload) / median(\.plainHTTP.upload),
                100 * median(\.server.download) / median(\.plainHTTP.download),
                100 * median(\.server.upload) / median(\.bare.upload), storage.name,
                100 * median(\.server.download) / median(\.bare.download)))
        record(measurements, in: &saved)
        try saved.save(to: saving.json)
    }

    private func record(_ measurements: [Measurement], in results: inout BenchResults) {
        let perThousand = 1000 / Double(sent)
        // One client's figures keep the names they had before --clients.
        let id = "server.\(storage.rawValue).\(records)" + (clients == 1 ? "" : ".\(clients)clients")
        func add(
            _ suffix: String, _ name: String, unit: String, better: BenchResults.Figure.Better, target: Double? = nil,
            _ figure: (Measurement) -> Double
        ) {
            results.add(
                id + suffix, name: name, unit: unit, better: better, runs: measurements.map(figure), target: target)
        }
        // The issue's targets are an instance's at its limit, which one client waiting for each answer is not.
        let atLimit = clients > 1
        add(
            ".upload.recordsPerSecond", "upload, records/s", unit: "records/s", better: .higher,
            target: atLimit ? 50_000 : nil
        ) {
            $0.server.upload
        }
        add(
            ".download.recordsPerSecond", "download, records/s", unit: "records/s", better: .higher,
            target: atLimit ? 100_000 : nil
        ) {
            $0.server.download
        }
        add(".peakMB", "server peak RSS", unit: "MB", better: .lower) { Double($0.peakKiB) / 1024 }
        for (phase, cpu) in [("upload", \Transfer.uploadCPU), ("download", \Transfer.downloadCPU)] {
            for (side, seconds) in [("server", \CPUTimes.servers), ("client", \CPUTimes.clients)] {
                add(
                    ".\(phase).\(side)CPUPerThousand", "\(phase), \(side) CPU s per 1,000 records", unit: "s",
                    better: .lower
                ) { $0.server[keyPath: cpu][keyPath: seconds] * perThousand }
            }
            add(
                ".reference.plainHTTP.\(phase).recordsPerSecond", "plain HTTP reference: \(phase), records/s",
                unit: "records/s", better: .higher
            ) { phase == "upload" ? $0.plainHTTP.upload : $0.plainHTTP.download }
            add(
                ".reference.plainHTTP.\(phase).serverCPUPerThousand",
                "plain HTTP reference: \(phase), server CPU s per 1,000 records", unit: "s", better: .lower
            ) { $0.plainHTTP[keyPath: cpu].servers * perThousand }
            add(
                ".reference.\(storage.rawValue).\(phase).recordsPerSecond",
                "\(storage.name) reference: \(phase), records/s",
                unit: "records/s", better: .higher
            ) { phase == "upload" ? $0.bare.upload : $0.bare.download }
        }
    }

    private func measure(executable: String) async throws -> Measurement {
        guard storage == .postgres else { return try await measure(executable: executable, database: nil) }
        return try await TestPostgres.withDatabase("sync_bench_\(UUID().uuidString.prefix(8).lowercased())") { url in
            try await measure(executable: executable, database: url)
        }
    }

    /// - Parameter database: the URL of the PostgreSQL database the server stores in; nil for a SQLite file.
    private func measure(executable: String, database: String?) async throws -> Measurement {
        let process = try await ServerProcess.start(executable: executable, database: database)
        defer { process.stop() }

        let zone = RecordZone.ID(zoneName: "Contacts")
        var accounts: [TestClient] = []
        for index in 0..<clients {
            let account = try await TestClient(baseURL: process.baseURL).signedUp(username: "bench\(index)")
            _ = try await account.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: zone)]))
            accounts.append(account)
        }
        let perClient = records / clients
        let batches = (0..<clients).map { client in
            (client * perClient..<(client + 1) * perClient).map { index -> RecordValue in
                var record = BenchSupport.contactRecord(index, zone: zone)
                record["modified"] = .date(Date())
                return record
            }
        }
        let uploads = batches.enumerated().map { PreparedUpload($1, batch: batch, writer: "bench-writer-\($0)") }
        let (server, answers) = try await transfer(uploads, zone: zone, accounts: accounts, server: process)
        let peakKiB = process.peakResidentKiB()

        // The same requests again, answered with the same bytes by a server that does nothing else.
        let plain = try await ServerProcess.start(named: "reference-server") { _ in
            [CommandLine.arguments[0], ReferenceServerCommand.configuration.commandName!]
        }
        defer { plain.stop() }
        let loaders = accounts.map { TestClient(baseURL: plain.baseURL, token: $0.token) }
        for (key, answer) in answers {
            let stored = try await loaders[0].send(.put, "/answers/\(key)", body: answer.body)
            if let failure = stored.failure { throw failure }
        }
        let (plainHTTP, _) = try await transfer(uploads, zone: zone, accounts: loaders, server: plain)

        let bare =
            database == nil
            ? try await SQLiteReference.measure(batches, batch: batch, page: page)
            : try await PostgresReference.measure(batches, batch: batch, page: page)
        return Measurement(server: server, plainHTTP: plainHTTP, bare: bare, peakKiB: peakKiB)
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
