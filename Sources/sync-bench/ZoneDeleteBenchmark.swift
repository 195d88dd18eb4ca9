import ArgumentParser
import Foundation
import SyncCore
import SyncTesting
import Synchronization

/// Deleting a large zone while another account writes: one account fills a zone with 100,000
/// records and deletes it; another writes small batches all along. Prints the other account's write
/// latency before and during the delete, and how long the delete took.
struct ZoneDeleteBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zone-delete",
        abstract:
            "Deleting a zone of 100,000 records: another account's write latency meanwhile, and the delete's time.",
        discussion: """
            Runs the real sync-server on a throw-away SQLite file, or on the PostgreSQL database \
            --database-url names (the benchmark's accounts get names of their own, so any database \
            the server may use will do).
            """)

    @Option(help: "Records in the zone that is deleted.")
    var records = 100_000

    @Option(help: "Records per modify request while filling the zone (the server allows 400).")
    var batch = 400

    @Option(help: "Records per write of the other account.")
    var writeBatch = 5

    @Option(help: "Writes of the other account timed before the delete, for comparison.")
    var baselineWrites = 200

    @Option(help: .init("A PostgreSQL database for the server, instead of a SQLite file.", valueName: "url"))
    var databaseURL: String?

    @Option(help: "Path of the sync-server executable (default: next to this one).")
    var server: String?

    func run() async throws {
        let executable = try ServerProcess.executable(server)
        let server = try await ServerProcess.start(executable: executable, database: databaseURL)
        defer { server.stop() }
        let storage = databaseURL == nil ? "SQLite" : "PostgreSQL"
        print(
            "sync-bench zone-delete (\(storage)): \(records) records, the other account writes \(writeBatch) at a time")

        let suffix = UUID().uuidString.prefix(8).lowercased()
        let owner = try await TestClient(baseURL: server.baseURL).signedUp(username: "zone-owner-\(suffix)")
        let other = try await TestClient(baseURL: server.baseURL).signedUp(username: "other-\(suffix)")
        let big = RecordZone.ID(zoneName: "Big")
        let small = RecordZone.ID(zoneName: "Small")
        _ = try await owner.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: big)]))
        _ = try await other.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: small)]))

        let fillStart = ContinuousClock.now
        for start in stride(from: 0, to: records, by: batch) {
            let saves = (start..<min(start + batch, records)).map { BenchSupport.contactRecord($0, zone: big) }
            let response = try await owner.modifyRecords(ModifyRecordsRequest(saves: saves))
            guard response.failedRecordSaves.isEmpty else {
                throw ValidationError("filling the zone: \(response.failedRecordSaves[0].error)")
            }
        }
        print(String(format: "filled in %.1f s", (ContinuousClock.now - fillStart).inSeconds))

        let writer = Writer(client: other, zone: small, batch: writeBatch)
        var baseline: [Double] = []
        for _ in 0..<baselineWrites { baseline.append(try await writer.write()) }

        // The other account writes until the delete has answered; the delete starts once it writes.
        let deleting = Flag()
        let during = Task {
            var latencies: [Double] = []
            while !deleting.isDone { latencies.append(try await writer.write()) }
            return latencies
        }
        let deleteStart = ContinuousClock.now
        let deleted = try await owner.modifyZones(ModifyZonesRequest(deletes: [big]))
        let deleteSeconds = (ContinuousClock.now - deleteStart).inSeconds
        deleting.finish()
        let latencies = try await during.value
        guard deleted.deletedZoneIDs == [big] else { throw ValidationError("the zone was not deleted: \(deleted)") }
        let remaining = try await owner.listZones()
        guard remaining.isEmpty else { throw ValidationError("the zone is still listed after its delete") }

        print(String(format: "delete answered in %.2f s", deleteSeconds))
        print("other account's writes   count   p50 ms   p99 ms   max ms")
        for (name, values) in [("before the delete", baseline), ("during the delete", latencies)] {
            let sorted = values.sorted()
            guard !sorted.isEmpty else {
                print(String(format: "%-22@ %7d", name as NSString, 0))
                continue
            }
            print(
                String(
                    format: "%-22@ %7d %8.1f %8.1f %8.1f", name as NSString, sorted.count,
                    BenchSupport.percentile(sorted, 50), BenchSupport.percentile(sorted, 99), sorted.last!))
        }
    }

    /// The other account's writes: `batch` new records at a time, each timed.
    private final class Writer: Sendable {
        let client: TestClient
        let zone: RecordZone.ID
        let batch: Int
        private let next = Counter()

        init(client: TestClient, zone: RecordZone.ID, batch: Int) {
            self.client = client
            self.zone = zone
            self.batch = batch
        }

        /// Writes one batch; returns how long it took, in milliseconds.
        func write() async throws -> Double {
            let first = next.take(batch)
            let saves = (first..<first + batch).map { BenchSupport.contactRecord($0, zone: zone) }
            let start = ContinuousClock.now
            let response = try await client.modifyRecords(ModifyRecordsRequest(saves: saves))
            let milliseconds = (ContinuousClock.now - start).inSeconds * 1000
            guard response.failedRecordSaves.isEmpty else {
                throw ValidationError("the other account's write failed: \(response.failedRecordSaves[0].error)")
            }
            return milliseconds
        }
    }
}

/// Whether something is over, set once from one task and read from another.
private final class Flag: Sendable {
    private let done = Mutex(false)

    var isDone: Bool { done.withLock { $0 } }

    func finish() { done.withLock { $0 = true } }
}

/// Hands out consecutive numbers, `count` at a time.
private final class Counter: Sendable {
    private let value = Mutex(0)

    /// The first of the next `count` numbers.
    func take(_ count: Int) -> Int {
        value.withLock { value in
            defer { value += count }
            return value
        }
    }
}
