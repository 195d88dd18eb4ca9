import ArgumentParser
import Foundation
import SyncCore
import SyncKit
import SyncTesting

/// Many devices against one server, or against instances over one PostgreSQL, for a bounded time:
/// push sockets that only listen, and SyncEngines that sync automatically and edit at random. It
/// prints the servers' memory, the sockets open and the push latency every minute, and checks at the
/// end that every device holds exactly what the server holds and that nothing was lost.
struct SoakBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract:
            "Many devices: push sockets and syncing devices against the server for a bounded time; push latency, server memory, errors, convergence.",
        discussion: """
            Starts the real sync-server (one on SQLite; with --instances N, N of them over one PostgreSQL \
            database made for the run and dropped after it) and opens --sockets push sockets from this process: \
            --devices of them belong to SyncEngines that sync automatically and make small random edits (a new \
            contact, an edit, a deletion; --edits-per-second among them all, chosen with --seed), the others \
            only listen. Devices and sockets are spread over --accounts accounts (one token each, shared by \
            their devices, each with its own device ID) and over the instances. Defaults: 1,000 sockets, 200 \
            devices, 10 accounts, 10 minutes, 20 edits per second.

            Every minute it prints each server's memory (VmRSS, RssAnon, RssFile), the sockets open, the edits \
            so far, that minute's push latency and the errors. A push is timed on the listening sockets, from \
            the moment a device hands its batch to its engine (just before the request) to the push's arrival. \
            At the end editing stops, the devices sync until nothing is pending, and each device is compared \
            with the server's records of its account (IDs and notes), and the server's records with what the \
            devices created and deleted. It exits 1 on any error (a failed save, delete or fetch, an engine \
            error, a dropped socket), a device that did not converge, a record lost or a push missing.

            The instances variant needs PostgreSQL, which it may create a database in: --postgres URL of its \
            maintenance database, or $SYNC_TEST_POSTGRES_URL with --instances, as in \
            `Scripts/with-postgres sync-bench soak --instances 2`. Raises the open-file limit to what the \
            sockets need (the servers inherit it), or says that the hard limit is too low.
            """)

    @Option(help: "Push sockets in all: the devices' own and those that only listen.")
    var sockets = 1000

    @Option(help: "Devices: SyncEngines that sync automatically (each keeps a push socket) and edit.")
    var devices = 200

    @Option(help: "Accounts the devices and sockets are spread over (1-10: the server lets one address create 10).")
    var accounts = 10

    @Option(help: "How long the devices edit, in minutes.")
    var minutes = 10

    @Option(help: "How long the devices edit, in seconds, for short runs (instead of --minutes).")
    var seconds: Int?

    @Option(help: "Edits per second, all devices together.")
    var editsPerSecond: Double = 20

    @Option(help: "Seed of the random edits (which device, what, which contact).")
    var seed: UInt64 = 42

    @Option(help: "Server instances over one PostgreSQL. (default: one server on SQLite; 2 with --postgres)")
    var instances: Int?

    @Option(help: "A PostgreSQL maintenance database's URL. (default: $SYNC_TEST_POSTGRES_URL, with --instances)")
    var postgres: String?

    @Option(help: "Path of the sync-server executable (default: next to this one).")
    var server: String?

    @OptionGroup var saving: SavingOptions

    func validate() throws {
        guard devices >= 1, sockets >= devices else {
            throw ValidationError(
                "--sockets must be at least --devices (each device has a socket), and --devices at least 1")
        }
        guard (1...10).contains(accounts), accounts <= devices else {
            throw ValidationError(
                "--accounts must be between 1 and 10 (one address may create 10 accounts at once) and at most --devices"
            )
        }
        guard editsPerSecond > 0, editsPerSecond <= 10_000 else {
            throw ValidationError("--edits-per-second must be above 0 and at most 10000")
        }
        guard (seconds ?? minutes * 60) > 0 else { throw ValidationError("the soak must last more than 0 seconds") }
        if let instances, !(1...16).contains(instances) {
            throw ValidationError("--instances must be between 1 and 16")
        }
    }

    func run() async throws {
        let executable = try ServerProcess.executable(server)
        // Made first, so that its load before is the machine's before the soak.
        var results = BenchResults(suite: "soak")
        results.measuring([executable])
        // This process holds every socket, and each server those of its share plus its own files.
        try BenchSupport.raiseOpenFileLimit(to: sockets + 1024)
        let arguments = [
            "--max-connections", "\(sockets + 1024)", "--max-connections-per-address", "\(sockets + 1024)",
            "--max-push-sockets-per-account", "\(sockets)",
        ]
        let count = instances ?? (postgres == nil ? 0 : 2)
        var database: String?
        var servers: [ServerProcess] = []
        let label = count == 0 ? "SQLite, 1 server" : "PostgreSQL, \(count) instances"
        let id = count == 0 ? "soak.sqlite" : "soak.postgres.\(count)"
        do {
            if count == 0 {
                servers = [try await ServerProcess.start(executable: executable, arguments: arguments)]
            } else {
                if let postgres { setenv("SYNC_TEST_POSTGRES_URL", postgres, 1) }
                guard TestPostgres.url != nil else {
                    throw ValidationError(
                        "--instances needs PostgreSQL: pass --postgres URL or run `Scripts/with-postgres sync-bench soak --instances \(count)`"
                    )
                }
                let name = "sync_soak_\(UUID().uuidString.prefix(8).lowercased())"
                try await TestPostgres.createDatabase(name)
                database = name
                let url = try TestPostgres.url(database: name)
                // One first, so that it alone creates the schema; the others find it done.
                servers = [try await ServerProcess.start(executable: executable, database: url, arguments: arguments)]
                for _ in 1..<count {
                    servers.append(
                        try await ServerProcess.start(executable: executable, database: url, arguments: arguments))
                }
            }
            let outcome = try await SoakRun(options: self, servers: servers, label: label).run()
            for server in servers { server.stop() }
            servers = []
            if let database { try await TestPostgres.dropDatabase(database) }
            database = nil
            outcome.record(id: id, label: label, devices: devices, in: &results)
            try results.save(to: saving.json)
            if !outcome.failures.isEmpty {
                print("FAILED: \(outcome.failures.joined(separator: "; "))")
                throw ExitCode(1)
            }
        } catch {
            for server in servers { server.stop() }
            if let database { try? await TestPostgres.dropDatabase(database) }
            throw error
        }
    }

    /// How long the devices edit.
    var duration: Duration { .seconds(seconds ?? minutes * 60) }
}
