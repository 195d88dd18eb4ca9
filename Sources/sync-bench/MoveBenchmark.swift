import ArgumentParser
import Foundation
import Logging
import SyncCore
import SyncServer
import SyncTesting
import Synchronization

/// An account moved between two PostgreSQL clusters (two databases of the PostgreSQL that
/// `Scripts/with-postgres` starts) under a running `sync-server` given both, while the account writes
/// a record at a time: how long the move's copy takes, and the longest time between two of the account's
/// acknowledged writes while it runs (what its devices wait).
struct MoveBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Accounts over clusters: an account of N contacts moved while it writes; copy time, writes paused.",
        discussion: """
            Needs a PostgreSQL server it may create databases on: --postgres URL, or run it as \
            Scripts/with-postgres sync-bench move.
            """)

    @Option(help: "Contacts (records) of the account moved.")
    var records = 20_000

    @Option(help: "Moves timed, back and forth between the two clusters.")
    var runs = 3

    @Option(help: "A PostgreSQL server's maintenance database (default: $SYNC_TEST_POSTGRES_URL).")
    var postgres: String?

    @Option(help: "Path of the sync-server executable (default: next to this one).")
    var server: String?

    @OptionGroup var saving: SavingOptions

    func validate() throws {
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
        guard records >= 1 else { throw ValidationError("--records must be at least 1") }
    }

    func run() async throws {
        let executable = try ServerProcess.executable(server)
        if let postgres { setenv("SYNC_TEST_POSTGRES_URL", postgres, 1) }
        guard TestPostgres.url != nil else {
            throw ValidationError(
                "no PostgreSQL: pass --postgres URL or run it as `Scripts/with-postgres sync-bench move`")
        }
        print("sync-bench move: an account of \(records) records moved \(runs) times while it writes")
        var results = BenchResults(suite: "move")
        results.measuring([executable])
        let names = (0..<2).map { "sync_bench_move_\($0)_\(UUID().uuidString.prefix(8).lowercased())" }
        for name in names { try await TestPostgres.createDatabase(name) }
        defer { Task { for name in names { try? await TestPostgres.dropDatabase(name) } } }
        let urls = try names.map { try TestPostgres.url(database: $0) }
        let process = try await ServerProcess.start(
            executable: executable, database: urls[0], arguments: ["--cluster", "b=\(urls[1])"])
        defer { process.stop() }
        var logger = Logger(label: "sync-bench-move")
        logger.logLevel = .error
        let store = try await ClusteredRecordStore.connect(
            clusters: [("main", urls[0]), ("b", urls[1])], placementRule: .fewestAccounts, logger: logger)
        defer { store.close() }

        let mover = try await TestClient(baseURL: process.baseURL).signedUp(username: "mover")
        let zone = RecordZone.ID(zoneName: "Contacts")
        _ = try await mover.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: zone)]))
        let upload = PreparedUpload(
            (0..<records).map { BenchSupport.contactRecord($0, zone: zone) }, batch: 400, writer: "upload")
        let (answers, _) = try await PreparedUpload.sendAll([upload], by: [mover])
        try upload.check(answers[0] ?? [], client: 0)

        var copies: [Double] = []
        var pauses: [Double] = []
        var destination = "b"
        for run in 1...runs {
            let log = WriteLog()
            let writer = Task {
                var item = records
                while !log.stopping {
                    item += 1
                    let request = ModifyRecordsRequest(
                        saves: [BenchSupport.contactRecord(item, zone: zone)], clientRequestID: "move-\(run)-\(item)")
                    do {
                        _ = try await mover.modifyRecords(request)
                        log.acknowledged()
                    } catch let error as SyncError where error.code == .serviceUnavailable {
                        try? await Task.sleep(for: .seconds(min(error.retryAfter ?? 1, 0.05)))
                    } catch {
                        log.failed("\(error)")
                    }
                }
            }
            try await waitUntil("the account writes", timeout: .seconds(60)) { log.count > 20 }
            let start = ContinuousClock.now
            let placed = Mutex<ContinuousClock.Instant?>(nil)
            let report = try await store.move(username: "mover", to: destination) { line in
                if line.contains("is on cluster") { placed.withLock { $0 = .now } }
            }
            let copy = ((placed.withLock { $0 } ?? .now) - start).inSeconds
            // Writes go on for a second after the move, so that the first after it is counted.
            let after = log.count
            try await waitUntil("the account writes after the move", timeout: .seconds(60)) { log.count > after + 20 }
            log.stop()
            _ = await writer.value
            if let failure = log.failures.first {
                throw ValidationError("a write failed other than with serviceUnavailable: \(failure)")
            }
            let pause = log.longestGap(from: start)
            let rows = report.rows.reduce(0) { $0 + $1.count }
            print(
                String(
                    format: "  run %d: %@ → %@, %d rows copied in %.2f s; writes paused %.2f s at most",
                    run, report.from, report.to, rows, copy, pause))
            copies.append(copy)
            pauses.append(pause)
            destination = destination == "b" ? "main" : "b"
        }
        results.add(
            "move.copy.seconds",
            name: "move of an account of \(records) records: marked moving to placed on the other cluster",
            unit: "s", better: .lower, runs: copies)
        results.add(
            "move.pause.seconds", name: "longest time between two of its acknowledged writes while it moved",
            unit: "s", better: .lower, runs: pauses)
        try results.save(to: saving.json)
    }
}

/// When the moved account's writes were acknowledged, and what failed otherwise.
private final class WriteLog: Sendable {
    private struct State {
        var acknowledged: [ContinuousClock.Instant] = []
        var failures: [String] = []
        var stopping = false
    }

    private let state = Mutex(State())

    func acknowledged() { state.withLock { $0.acknowledged.append(.now) } }
    func failed(_ error: String) { state.withLock { $0.failures.append(error) } }
    /// Asks the writer to stop after its write under way.
    func stop() { state.withLock { $0.stopping = true } }
    var stopping: Bool { state.withLock { $0.stopping } }
    var count: Int { state.withLock { $0.acknowledged.count } }
    var failures: [String] { state.withLock { $0.failures } }

    /// The longest time between two acknowledged writes, from the last one before `start` on, in seconds.
    func longestGap(from start: ContinuousClock.Instant) -> Double {
        state.withLock { state in
            let times = state.acknowledged
            let first = times.lastIndex { $0 <= start } ?? 0
            guard first + 1 < times.count else { return 0 }
            return zip(times[first...], times[(first + 1)...]).map { ($1 - $0).inSeconds }.max() ?? 0
        }
    }
}
