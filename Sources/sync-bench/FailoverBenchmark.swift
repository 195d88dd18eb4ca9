import ArgumentParser
import Foundation
import SyncCore
import SyncTesting
import Synchronization

/// Two server instances over a PostgreSQL primary with a synchronous standby (pg_auto_failover, started
/// by `Scripts/with-postgres-ha --start`): the upload rate with synchronous replication and beside it
/// without (`synchronous_commit = local`), in one run; then writers keep writing while the primary is
/// killed (PostgreSQL and its keeper, as a lost machine), and the longest time between two acknowledged
/// writes from the kill on is how long writes paused around the failover.
struct FailoverBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "failover",
        abstract: "PostgreSQL failover: upload with and without synchronous replication, writes paused by a failover.",
        discussion: """
            Starts a pg_auto_failover cluster of its own (Debian's postgresql-15-auto-failover and \
            pg-auto-failover-cli) with Scripts/with-postgres-ha, so it runs from the source tree.
            """)

    @Option(help: "Records each upload sends, spread over the clients.")
    var records = 20_000

    @Option(help: "Clients uploading at once, one account each.")
    var clients = 4

    @Option(help: "Records per modify request.")
    var batch = 400

    @Option(help: "Uploads timed in each mode, the two modes taking turns.")
    var runs = 3

    @Option(help: "Path of the sync-server executable (default: next to this one).")
    var server: String?

    @OptionGroup var saving: SavingOptions

    func run() async throws {
        let executable = try ServerProcess.executable(server)
        print("sync-bench failover: starting a primary, a synchronous standby and a monitor (Scripts/with-postgres-ha)")
        let cluster = try await FailoverCluster.start()
        defer { cluster.remove() }
        var results = BenchResults(suite: "failover")
        results.measuring([executable])
        let database = "sync_bench_failover"
        try await TestPostgres.$override.withValue(cluster.url) {
            try await TestPostgres.createDatabase(database)
        }
        let url = try TestPostgres.$override.withValue(cluster.url) { try TestPostgres.url(database: database) }
        let servers = [
            try await ServerProcess.start(executable: executable, database: url),
            try await ServerProcess.start(executable: executable, database: url),
        ]
        defer { for server in servers { server.stop() } }
        let urls = servers.map(\.baseURL)

        // The upload, with synchronous replication (every commit waits for the standby) and without; the
        // same accounts each time, into a new zone (the server allows 10 sign-ups per address and minute).
        var uploaders: [TestClient] = []
        for index in 0..<clients {
            uploaders.append(
                try await TestClient(baseURL: urls[index % urls.count]).signedUp(username: "upload-\(index)"))
        }
        var rates: [Bool: [Double]] = [:]
        for run in 0..<runs {
            for synchronous in [true, false] {
                try await setSynchronousCommit(synchronous ? "on" : "local", cluster: cluster)
                let rate = try await upload(
                    by: uploaders, into: RecordZone.ID(zoneName: "Upload-\(run)-\(synchronous ? "on" : "local")"))
                rates[synchronous, default: []].append(rate)
                print(
                    String(
                        format: "  upload, %@: %.0f records/s",
                        synchronous ? "synchronous standby" : "standby not waited for",
                        rate))
            }
        }
        try await setSynchronousCommit("on", cluster: cluster)
        results.add(
            "failover.upload.synchronous.perSecond", name: "upload, every commit on the standby too",
            unit: "records/s", better: .higher, runs: rates[true] ?? [])
        results.add(
            "failover.upload.local.perSecond", name: "upload, the standby not waited for (synchronous_commit = local)",
            unit: "records/s", better: .higher, runs: rates[false] ?? [])

        // Writes around an unplanned failover.
        let pause = try await pauseAroundFailover(urls: urls, cluster: cluster)
        print(String(format: "  writes paused around the failover: %.1f s (target under 15 s)", pause))
        results.add(
            "failover.pause.seconds", name: "writes paused around an unplanned failover", unit: "s", better: .lower,
            runs: [pause], target: 15)
        try results.save(to: saving.json)
    }

    /// Sets `synchronous_commit` for every session of the primary (a reload reaches those already open).
    private func setSynchronousCommit(_ value: String, cluster: FailoverCluster) async throws {
        try await TestPostgres.$override.withValue(cluster.url) {
            try await TestPostgres.execute("ALTER SYSTEM SET synchronous_commit = '\(value)'")
            try await TestPostgres.execute("SELECT pg_reload_conf()")
        }
    }

    /// Records per second of one upload by `accounts` into a new zone of each.
    private func upload(by accounts: [TestClient], into zone: RecordZone.ID) async throws -> Double {
        let perClient = records / accounts.count
        for account in accounts {
            _ = try await account.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: zone)]))
        }
        let uploads = accounts.indices.map { index in
            PreparedUpload(
                (0..<perClient).map { BenchSupport.contactRecord($0, zone: zone) }, batch: batch,
                writer: "\(zone.zoneName)-\(index)")
        }
        let (answers, seconds) = try await PreparedUpload.sendAll(uploads, by: accounts)
        for (index, upload) in uploads.enumerated() { try upload.check(answers[index] ?? [], client: index) }
        return Double(perClient * accounts.count) / seconds
    }

    /// Four writers save one record at a time through both instances (moving to the other when told to
    /// come back, after its `retryAfter`); the primary is killed once they run; returns the longest time
    /// between two acknowledged writes, once they write again for 5 s.
    private func pauseAroundFailover(urls: [String], cluster: FailoverCluster) async throws -> Double {
        let zone = RecordZone.ID(zoneName: "Pause")
        let log = PauseLog()
        var writers: [TestClient] = []
        for index in 0..<4 {
            let client = try await TestClient(baseURL: urls[index % urls.count]).signedUp(username: "pause-\(index)")
            _ = try await client.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: zone)]))
            writers.append(client)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, first) in writers.enumerated() {
                group.addTask {
                    var client = first
                    var item = 0
                    while !log.writingAgain {
                        item += 1
                        let request = ModifyRecordsRequest(
                            saves: [BenchSupport.contactRecord(item, zone: zone)],
                            clientRequestID: "pause-\(index)-\(item)")
                        do {
                            _ = try await client.modifyRecords(request)
                            log.acknowledged()
                        } catch let error as SyncError where error.code == .serviceUnavailable {
                            try await Task.sleep(for: .seconds(error.retryAfter ?? 1))
                            let next = (urls.firstIndex(of: client.baseURL) ?? 0) + 1
                            client.baseURL = urls[next % urls.count]
                        }
                    }
                }
            }
            // Writes flow for 2 s, then the primary goes.
            try await waitUntil("the writers write", timeout: .seconds(60)) {
                log.count > 100
            }
            try await Task.sleep(for: .seconds(2))
            log.killed()
            print("  " + (try await cluster.control("kill-primary")).trimmingCharacters(in: .whitespacesAndNewlines))
            try await group.waitForAll()
        }
        guard let pause = log.pause else {
            throw ValidationError("no write was acknowledged on both sides of the failover")
        }
        return pause
    }
}

/// When writes were acknowledged, and when the primary was killed.
private final class PauseLog: Sendable {
    private struct State {
        var acknowledged: [ContinuousClock.Instant] = []
        var killedAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    func acknowledged() { state.withLock { $0.acknowledged.append(.now) } }
    func killed() { state.withLock { $0.killedAt = .now } }
    var count: Int { state.withLock { $0.acknowledged.count } }

    /// Writes have been acknowledged for 5 s after the kill.
    var writingAgain: Bool {
        state.withLock { state in
            guard let killed = state.killedAt, let last = state.acknowledged.last, last > killed else { return false }
            return state.acknowledged.contains { $0 > killed && last - $0 >= .seconds(5) }
        }
    }

    /// The longest time between two acknowledged writes from the last one before the kill on, in seconds
    /// (a write in flight at the kill may still be answered a moment after it).
    var pause: Double? {
        state.withLock { state in
            let times = state.acknowledged.sorted()
            guard let killed = state.killedAt, let start = times.lastIndex(where: { $0 <= killed }),
                start + 1 < times.count
            else { return nil }
            return zip(times[start...], times[(start + 1)...]).map { ($1 - $0).inSeconds }.max()
        }
    }
}
