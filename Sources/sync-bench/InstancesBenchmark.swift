import ArgumentParser
import Foundation
import SyncCore
import SyncTesting

/// The server on SQLite and on 1, 2 and 4 instances over one PostgreSQL: 8 clients (one account each)
/// upload at once, each to its own instance in turn, then download from another instance; then one
/// device writes on one instance while another listens on a different one, for the push latency.
struct InstancesBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "instances",
        abstract:
            "Server instances over PostgreSQL against SQLite: records/s up and down, push latency across instances.",
        discussion: """
            Needs a PostgreSQL that the benchmark may create databases in: --postgres URL of its \
            maintenance database, e.g. Scripts/with-postgres sync-bench instances (which sets \
            $SYNC_TEST_POSTGRES_URL).
            """)

    @Option(help: "Records in all, spread over the clients.")
    var records = 40_000

    @Option(help: "Clients writing and reading at once, one account each.")
    var clients = 8

    @Option(help: "Records per modify request (the server allows 400).")
    var batch = 400

    @Option(help: "Pushes timed across instances.")
    var pushes = 200

    @Option(parsing: .upToNextOption, help: "Instance counts on PostgreSQL.")
    var instances: [Int] = [1, 2, 4]

    @Option(help: "A PostgreSQL maintenance database's URL (default: $SYNC_TEST_POSTGRES_URL).")
    var postgres: String?

    @Option(help: "Path of the sync-server executable (default: next to this one).")
    var server: String?

    @Option(
        help:
            "Runs of the whole sequence, the configurations taking turns so that the machine's drift falls on each; a saved figure is the median of its runs."
    )
    var runs = 3

    @OptionGroup var saving: SavingOptions

    struct Row {
        var name: String
        var upload: Double
        var download: Double
        var p50: Double
        var p99: Double
        /// CPU seconds per 1,000 records of each side: they share the machine's cores, so a rate is read
        /// against them.
        var uploadCPU: CPUTimes
        var downloadCPU: CPUTimes
    }

    func validate() throws {
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
    }

    func run() async throws {
        let executable = try ServerProcess.executable(server)
        if let postgres { setenv("SYNC_TEST_POSTGRES_URL", postgres, 1) }
        guard TestPostgres.url != nil else {
            throw ValidationError(
                "no PostgreSQL: pass --postgres URL or run it as `Scripts/with-postgres sync-bench instances`")
        }
        print("sync-bench instances: \(records) records by \(clients) clients in batches of \(batch); \(pushes) pushes")
        print("storage              upload rec/s  download rec/s  push p50   push p99")
        var results = BenchResults(suite: "instances")
        results.measuring([executable])
        // Each configuration's rows, in the order they were first measured.
        var measured: [(id: String, rows: [Row])] = []
        func keep(_ row: Row, id: String) {
            print(Self.format(row))
            if let index = measured.firstIndex(where: { $0.id == id }) {
                measured[index].rows.append(row)
            } else {
                measured.append((id, [row]))
            }
        }
        for run in 1...runs {
            if runs > 1 { print("run \(run) of \(runs)") }
            let sqlite = try await measure(
                name: "SQLite, 1 instance", servers: [try await ServerProcess.start(executable: executable)],
                onPostgres: false)
            keep(sqlite, id: "sqlite.1")
            for count in instances {
                let name = "sync_bench_\(UUID().uuidString.prefix(8).lowercased())"
                try await TestPostgres.createDatabase(name)
                let url = try TestPostgres.url(database: name)
                // One first, so that it alone creates the schema; the others find it done.
                var servers = [try await ServerProcess.start(executable: executable, database: url)]
                for _ in 1..<max(count, 1) {
                    servers.append(try await ServerProcess.start(executable: executable, database: url))
                }
                let row = try await measure(name: "PostgreSQL, \(count) inst.", servers: servers, onPostgres: true)
                try await TestPostgres.dropDatabase(name)
                keep(row, id: "postgres.\(count)")
            }
        }
        for (id, rows) in measured { Self.record(rows, id: id, in: &results) }
        try results.save(to: saving.json)
    }

    /// One configuration's figures, each with every run: `instances.sqlite.1.upload.perSecond`,
    /// `instances.postgres.2.pushP99.ms`, …
    static func record(_ rows: [Row], id: String, in results: inout BenchResults) {
        guard let name = rows.first?.name else { return }
        results.add(
            "instances.\(id).upload.perSecond", name: "\(name): upload", unit: "records/s", better: .higher,
            runs: rows.map(\.upload))
        results.add(
            "instances.\(id).download.perSecond", name: "\(name): download", unit: "records/s",
            better: .higher, runs: rows.map(\.download))
        results.add(
            "instances.\(id).pushP50.ms", name: "\(name): push p50", unit: "ms", better: .lower, runs: rows.map(\.p50))
        results.add(
            "instances.\(id).pushP99.ms", name: "\(name): push p99", unit: "ms", better: .lower, runs: rows.map(\.p99))
        for (phase, cpu) in [("upload", rows.map(\.uploadCPU)), ("download", rows.map(\.downloadCPU))] {
            for (side, seconds) in [
                ("client", cpu.map(\.clients)), ("server", cpu.map(\.servers)), ("postgres", cpu.map(\.postgres)),
            ] {
                results.add(
                    "instances.\(id).\(phase).\(side)CPUPerThousand",
                    name: "\(name): \(phase), \(side) CPU s per 1,000",
                    unit: "s", better: .lower, runs: seconds)
            }
        }
    }

    /// The row's line, then where its CPU went: the clients' share apart, and the servers' own rate (records
    /// per second of their CPU, all instances together).
    static func format(_ row: Row) -> String {
        func shares(_ cpu: CPUTimes) -> String {
            String(format: "clients %.4f, servers %.4f, PostgreSQL %.4f", cpu.clients, cpu.servers, cpu.postgres)
        }
        return String(
            format: "%@ %12.0f  %14.0f  %6.1f ms  %6.1f ms\n%@CPU s per 1,000 up: %@; down: %@\n%@"
                + "servers alone: %.0f records per CPU-second up, %.0f down",
            BenchSupport.padded(row.name), row.upload, row.download, row.p50, row.p99,
            Self.indent, shares(row.uploadCPU), shares(row.downloadCPU), Self.indent, 1000 / row.uploadCPU.servers,
            1000 / row.downloadCPU.servers)
    }

    private static let indent = String(repeating: " ", count: 21)

    private func measure(name: String, servers: [ServerProcess], onPostgres: Bool) async throws -> Row {
        defer { for server in servers { server.stop() } }
        let urls = servers.map(\.baseURL)
        let zone = RecordZone.ID(zoneName: "Contacts")
        var accounts: [TestClient] = []
        for index in 0..<clients {
            let client = try await TestClient(baseURL: urls[index % urls.count]).signedUp(username: "bench\(index)")
            _ = try await client.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: zone)]))
            accounts.append(client)
        }
        let perClient = records / clients

        let uploads = (0..<clients).map { index in
            PreparedUpload(
                (0..<perClient).map { BenchSupport.contactRecord($0, zone: zone) }, batch: batch,
                writer: "bench-writer-\(index)")
        }

        // Not on SQLite: PostgreSQL idles there, and a backend of its own ending (autovacuum's) took
        // the sum of its processes down, which printed as a negative share.
        var cpu = CPUReading(servers: servers, countsPostgres: onPostgres)
        let (answers, uploadSeconds) = try await PreparedUpload.sendAll(uploads, by: accounts)
        let upload = Double(perClient * clients) / uploadSeconds
        let uploadCPU = cpu.next().perThousand(of: perClient * clients)
        for (index, upload) in uploads.enumerated() {
            try upload.check(answers[index] ?? [], client: index)
        }
        // The checks' CPU is nobody's in the figures.
        _ = cpu.next()

        let downloadStart = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, account) in accounts.enumerated() {
                var client = account
                client.baseURL = urls[(index + 1) % urls.count]
                group.addTask {
                    let fetched = try await client.fetchAllZoneChanges(zone, resultsLimit: batch)
                    guard fetched.modifications.count == perClient else {
                        throw ValidationError("client \(index) fetched \(fetched.modifications.count) of \(perClient)")
                    }
                }
            }
            try await group.waitForAll()
        }
        let download = Double(perClient * clients) / (ContinuousClock.now - downloadStart).inSeconds
        let downloadCPU = cpu.next().perThousand(of: perClient * clients)

        // A listener on the first instance, a writer on the last (another one when there are several).
        var listener = accounts[0]
        listener.deviceID = "listener"
        var writer = try await TestClient(baseURL: urls[urls.count - 1]).signedIn(username: "bench0")
        writer.deviceID = "writer"
        let socket = try await listener.openPush()
        defer { socket.close() }
        var latencies: [Double] = []
        for index in 0..<pushes {
            let sent = ContinuousClock.now
            _ = try await writer.modifyRecords(
                ModifyRecordsRequest(saves: [BenchSupport.contactRecord(perClient + index, zone: zone)]))
            guard let received = await socket.next(within: .seconds(30)) else {
                throw ValidationError("push \(index) did not arrive within 30 s")
            }
            latencies.append((received.at - sent).inSeconds * 1000)
        }
        latencies.sort()
        return Row(
            name: name, upload: upload, download: download, p50: BenchSupport.percentile(latencies, 50),
            p99: BenchSupport.percentile(latencies, 99), uploadCPU: uploadCPU, downloadCPU: downloadCPU)
    }
}
