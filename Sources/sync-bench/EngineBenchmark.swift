import ArgumentParser
import Foundation
import SyncCore
import SyncKit
import SyncTesting
import Synchronization

/// Measures the engine end to end: device A saves N contact-sized records and sends, device B
/// fetches; then the latency of single edits from A's save to B's `fetchedRecordZoneChanges`
/// through push. Both devices run in this process against a `sync-server` child process.
struct EngineBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "engine",
        abstract: "Sync engine: 10,000 records up and down, and edit-to-other-device latency via push.")

    @Option(help: "How many records device A sends and device B fetches.")
    var records = 10_000

    @Option(help: "How many single edits to time.")
    var edits = 100

    @Option(help: "Path of the sync-server executable (default: next to this one).")
    var server: String?

    func run() async throws {
        let process = try await ServerProcess.start(executable: try ServerProcess.executable(server))
        defer { process.stop() }
        let account = try await TestClient(baseURL: process.baseURL).signedUp(username: "bench")
        func makeEngine(_ delegate: BenchDevice, deviceID: String, automaticallySync: Bool = false) -> SyncEngine {
            var configuration = SyncEngine.Configuration(
                database: Database(
                    serverURL: URL(string: process.baseURL)!, credentials: .token(account.token!), deviceID: deviceID),
                stateSerialization: nil, delegate: delegate)
            configuration.automaticallySync = automaticallySync
            return SyncEngine(configuration)
        }

        let deviceA = BenchDevice()
        let engineA = makeEngine(deviceA, deviceID: "A")
        // The records exist before the first sync; signing in queues them all (see BenchDevice).
        for index in 0..<records { deviceA.put(BenchDevice.contact(index, note: "first")) }
        BenchSupport.resetPeakResident()
        var cpu = CPUReading(server: process)
        let sendStart = ContinuousClock.now
        try await engineA.sendChanges()
        let sendTime = ContinuousClock.now - sendStart
        let sendCPU = cpu.next()
        let sendPeak = BenchSupport.peakResidentKiB(of: "self")

        let deviceB = BenchDevice()
        let engineB = makeEngine(deviceB, deviceID: "B")
        BenchSupport.resetPeakResident()
        let fetchStart = ContinuousClock.now
        try await engineB.fetchChanges()
        let fetchTime = ContinuousClock.now - fetchStart
        let fetchCPU = cpu.next()
        let fetchPeak = BenchSupport.peakResidentKiB(of: "self")
        guard deviceB.count == records else {
            throw ValidationError("device B has \(deviceB.count) records, expected \(records)")
        }

        // Latency: B syncs automatically (push); A sends each edit at once.
        let listener = BenchDevice()
        let engineC = makeEngine(listener, deviceID: "C", automaticallySync: true)
        try await listener.waitForAnyFetch(timeout: .seconds(30))  // initial fetch after connecting
        var latencies: [Duration] = []
        for edit in 0..<edits {
            let index = edit % records
            deviceA.put(BenchDevice.contact(index, note: "edit \(edit)"))
            let start = ContinuousClock.now
            engineA.state.add(pendingRecordZoneChanges: [.saveRecord(BenchDevice.recordID(index))])
            try await engineA.sendChanges()
            try await listener.waitFor(note: "edit \(edit)", of: BenchDevice.recordID(index), timeout: .seconds(10))
            latencies.append(ContinuousClock.now - start)
        }
        await engineC.cancelOperations()
        latencies.sort()
        func milliseconds(_ duration: Duration) -> Double { duration.inSeconds * 1000 }
        print(
            "sync-bench engine: \(records) contact-sized records, \(edits) edits, loopback, sync-server child process")
        print("phase                     wall time   records/s   peak RSS (this process)   CPU: devices, server")
        print(
            String(
                format: "A sends %6d records   %8.0f ms  %10.0f   %6.1f MiB                 %6.0f ms, %6.0f ms",
                records, milliseconds(sendTime), Double(records) / milliseconds(sendTime) * 1000,
                Double(sendPeak) / 1024, sendCPU.clients * 1000, sendCPU.servers * 1000))
        print(
            String(
                format: "B fetches %6d records %8.0f ms  %10.0f   %6.1f MiB                 %6.0f ms, %6.0f ms",
                records, milliseconds(fetchTime), Double(records) / milliseconds(fetchTime) * 1000,
                Double(fetchPeak) / 1024, fetchCPU.clients * 1000, fetchCPU.servers * 1000))
        print(
            String(
                format: "edit A → B via push: p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                milliseconds(BenchSupport.percentile(latencies, 50)),
                milliseconds(BenchSupport.percentile(latencies, 99)),
                milliseconds(latencies.last!)))
    }
}

/// A minimal app for the benchmark: records in memory, handed to the engine as they are.
final class BenchDevice: SyncEngineDelegate {
    static let zone = RecordZone.ID(zoneName: "Contacts")
    static let batchSize = 400

    private let records = Mutex<[Record.ID: Record]>([:])
    private let fetches = Mutex(0)

    static func recordID(_ index: Int) -> Record.ID {
        Record.ID(recordName: "contact-\(index)", zoneID: zone)
    }

    /// A record about the size of a contact: name, two emails, a phone, an address and a note.
    static func contact(_ index: Int, note: String) -> Record {
        let record = Record(recordType: "Contact", recordID: recordID(index))
        record["name"] = "Person Number \(index)"
        record["emails"] = ["person\(index)@example.com", "p\(index)@work.example.org"]
        record["phones"] = ["+44 20 7946 \(String(format: "%04d", index % 10_000))"]
        record["organization"] = "Example Organisation Ltd"
        record["address"] = "\(index) Example Street, London, EC1A 1BB, United Kingdom"
        record["note"] = note
        record["modified"] = Date()
        return record
    }

    var count: Int { records.withLock { $0.count } }

    /// Stores a local edit: into the known server record, in place, as a CloudKit app does.
    func put(_ record: Record) {
        records.withLock { records in
            guard let known = records[record.recordID] else {
                records[record.recordID] = record
                return
            }
            for key in record.allKeys() { known[key] = record[key] }
        }
    }

    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
        switch event {
        case .accountChange(let change):
            // As Apple's sample does: on sign-in, queue the zone and everything held locally.
            if case .signIn = change.changeType {
                syncEngine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: Self.zone))])
                let ids = records.withLock { $0.keys.sorted() }
                syncEngine.state.add(pendingRecordZoneChanges: ids.map { .saveRecord($0) })
            }
        case .fetchedRecordZoneChanges(let changes):
            records.withLock { records in
                for modification in changes.modifications {
                    records[modification.record.recordID] = modification.record
                }
            }
        case .sentRecordZoneChanges(let sent):
            records.withLock { records in
                for record in sent.savedRecords { records[record.recordID] = record }
            }
        case .didFetchChanges:
            fetches.withLock { $0 += 1 }
        default:
            break
        }
    }

    func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.RecordZoneChangeBatch?
    {
        // As the contacts app does: only the next batch's worth of pending changes, 400 to a batch (the
        // server's limit) rather than CKSyncEngine's 250. Apple's sample reads the whole list instead.
        let pending = syncEngine.state.pendingRecordZoneChanges(
            first: Self.batchSize, where: context.options.scope.contains)
        return await SyncEngine.RecordZoneChangeBatch(pendingChanges: pending, maximumCount: Self.batchSize) { id in
            self.records.withLock { $0[id] }
        }
    }

    func waitForAnyFetch(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while fetches.withLock({ $0 }) == 0 {
            guard ContinuousClock.now < deadline else { throw ValidationError("no fetch happened within \(timeout)") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    func waitFor(note: String, of id: Record.ID, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while records.withLock({ $0[id]?["note"] as? String }) != note {
            guard ContinuousClock.now < deadline else {
                throw ValidationError("edit '\(note)' did not arrive within \(timeout)")
            }
            try await Task.sleep(for: .microseconds(200))
        }
    }
}
