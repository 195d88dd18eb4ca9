import Foundation
import SyncCore
import SyncKit
import SyncServer
import SyncTesting
import Synchronization
import TestTraits
import Testing

/// PostgreSQL itself lost under two instances, 8 writing clients and two engines: stopped and started
/// again (``PostgresRestartTests``), or its primary killed under a cluster that fails over
/// (``PostgresFailoverTests``). Each runs on a PostgreSQL of its own: losing the shared one would fail
/// every test running beside it.
enum DatabaseOutage {
    static let clients = 8
    static let batches = 24
    static let batch = 40
    /// Each client writes this many batches, then waits until the database is lost.
    static let pausedAfter = batches / 3
    static let zone = RecordZone.ID(zoneName: "Load")

    /// How the database is lost and comes back.
    struct Disruption: Sendable {
        enum Kind: Sendable {
            /// Stopped until `recover` starts it: every request meanwhile is refused.
            case stopped
            /// The primary lost: every client is told to come back until the standby is promoted.
            case failover
            /// A planned switchover, done when `lose` returns: a client may be told to come back, or not.
            case switchover
        }

        let kind: Kind
        /// The maintenance database of the PostgreSQL the instances use.
        let url: String
        let lose: @Sendable () async throws -> Void
        let recover: @Sendable () async throws -> Void
    }

    /// What the writing clients saw.
    final class Log: Sendable {
        let observed = Mutex(Observed())

        func withLock<Result>(_ body: (inout Observed) -> Result) -> Result { observed.withLock { body(&$0) } }
    }

    struct Observed: Sendable {
        var acknowledged: [String: Set<String>] = [:]
        var batchesDone = 0
        /// Clients that were told `serviceUnavailable` with `retryAfter` at least once.
        var toldToRetry: Set<Int> = []
        /// Every other failure, which must not happen.
        var unexpected: [String] = []
        /// Set once the database is lost: each client waits for it after a third of its batches, so
        /// that every one of them writes while it is, however fast the others are.
        var databaseLost = false
    }

    /// Requests fail with `retryAfter` while the database is lost, then succeed; no acknowledged write is
    /// lost; the engines converge; push flows between the instances again.
    static func run(_ disruption: Disruption) async throws {
        let path = "outage-\(UUID())"
        let (one, two) = try await TestPostgres.$override.withValue(disruption.url) {
            try await TestServer.$backend.withValue(.postgres) {
                (try await TestServer.start(storagePath: path), try await TestServer.start(storagePath: path))
            }
        }
        let instances = [one.baseURL, two.baseURL]

        // Ada's laptop on instance 1 and phone on instance 2, in sync before the load begins.
        let ada = try await TestClient(baseURL: one.baseURL).signedUp(username: "ada")
        // Writes of its own show when an instance takes writes again after the disruption.
        let prober = try await TestClient(baseURL: one.baseURL).signedUp(username: "prober")
        let laptop = TestDevice(name: "laptop", server: one, client: ada)
        let phone = TestDevice(name: "phone", server: two, client: ada)
        for index in 0..<10 { laptop.save(id: "before-\(index)", name: "Before \(index)") }
        try await laptop.engine.sendChanges()
        try await phone.engine.fetchChanges()
        #expect(phone.names.count == 10)

        let observed = Log()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<Self.clients {
                let first = try await TestClient(baseURL: instances[index % 2]).signedUp(username: "user\(index)")
                try await first.saveZones("Load")
                group.addTask { try await Self.write(as: index, first: first, instances: instances, observed) }
            }
            try await waitUntil("every client has written a third of its batches, and waits") {
                observed.withLock { $0.batchesDone } == Self.clients * Self.pausedAfter
            } observed: {
                let seen = observed.withLock { $0 }
                return "\(seen.batchesDone) batches written, failures: \(seen.unexpected.prefix(3))"
            }
            try await disruption.lose()
            observed.withLock { $0.databaseLost = true }

            // While the database is lost: the clients are told to come back, and the engines' edits wait.
            if disruption.kind != .switchover {
                try await waitUntil("every writing client is told serviceUnavailable with retryAfter") {
                    observed.withLock { $0.toldToRetry.count } == Self.clients
                } observed: {
                    let seen = observed.withLock { $0 }
                    return "told: \(seen.toldToRetry.sorted()), other failures: \(seen.unexpected.prefix(3))"
                }
            }
            for index in 0..<5 { laptop.save(id: "during-\(index)", name: "During \(index)") }
            phone.save(id: "before-0", name: "Renamed on the phone")
            if disruption.kind == .stopped {
                let refused = await #expect(
                    throws: SyncError.self, "nothing is acknowledged while the database is down"
                ) {
                    try await laptop.engine.database.save(
                        Record(recordType: "Contact", recordID: TestDevice.recordID("probe")))
                }
                #expect(
                    refused?.code == .serviceUnavailable && refused?.retryAfter == 2, "\(String(describing: refused))")
            }
            let laptopSend = Task { try await laptop.engine.sendChanges() }
            let phoneSend = Task { try await phone.engine.sendChanges() }

            try await disruption.recover()
            // What follows does not retry as clients do: first each instance takes writes again (it finds
            // the new primary moments after the cluster says it is writable, and answers 503 meanwhile).
            for url in instances {
                var probe = prober
                probe.baseURL = url
                try await waitUntil("the instance at \(url) takes writes again", timeout: .seconds(120)) {
                    (try? await probe.saveZones("Probe")) != nil
                }
            }
            try await group.waitForAll()
            // Each engine retries by itself; one whose retries ran out before the recovery sends again.
            if (try? await laptopSend.value) == nil { try await laptop.engine.sendChanges() }
            if (try? await phoneSend.value) == nil { try await phone.engine.sendChanges() }
        }

        let seen = observed.withLock { $0 }
        #expect(seen.unexpected.isEmpty, "\(seen.unexpected.prefix(5))")
        for index in 0..<Self.clients {
            let client = try await TestClient(baseURL: instances[(index + 1) % 2]).signedIn(username: "user\(index)")
            let stored = Set(try await client.fetchAllZoneChanges(Self.zone).modifications.map(\.recordID.recordName))
            let mine = seen.acknowledged["user\(index)"] ?? []
            #expect(mine.count == Self.batches * Self.batch, "user\(index) got every batch acknowledged")
            #expect(mine == stored, "user\(index): \(mine.subtracting(stored).count) acknowledged records missing")
        }

        try await laptop.engine.fetchChanges()
        try await phone.engine.fetchChanges()
        let expected = (["Renamed on the phone"] + (1..<10).map { "Before \($0)" } + (0..<5).map { "During \($0)" })
            .sorted()
        #expect(laptop.names == expected)
        #expect(phone.names == expected)
        #expect(laptop.engine.state.pendingRecordZoneChanges.isEmpty)
        #expect(phone.engine.state.pendingRecordZoneChanges.isEmpty)

        // Push between the instances again: both listen on the database that takes writes now.
        try await waitUntil("instance 1's relay listens again") { one.pushRelay?.isListening == true }
        try await waitUntil("instance 2's relay listens again") { two.pushRelay?.isListening == true }
        var laptopClient = ada
        laptopClient.deviceID = "laptop"
        var phoneClient = try await TestClient(baseURL: two.baseURL).signedIn(username: "ada")
        phoneClient.deviceID = "phone"
        let socket = try await laptopClient.openPush()
        try await phoneClient.saveZones("After")
        #expect(await socket.next()?.message == PushMessage(event: .databaseChanged, scope: .private))
        socket.close()
        try await one.stop()
        try await two.stop()
    }

    /// Writes the client's batches, each with one client request ID for all its tries. Told
    /// `serviceUnavailable`, it tries again on the other instance after the `retryAfter` the server asked
    /// for, as the engine does.
    static func write(as index: Int, first: TestClient, instances: [String], _ observed: Log)
        async throws
    {
        var client = first
        for batch in 0..<batches {
            if batch == pausedAfter {
                try await waitUntil("user\(index) is let on once the database is lost", timeout: .seconds(300)) {
                    observed.withLock { $0.databaseLost }
                }
            }
            let records = (0..<Self.batch).map { item in
                var record = RecordValue(
                    recordType: "Item", recordID: RecordValue.ID(recordName: "b\(batch)-\(item)", zoneID: zone))
                record["n"] = .int64(Int64(item))
                return record
            }
            let request = ModifyRecordsRequest(saves: records, clientRequestID: "user\(index)-\(batch)")
            var failed = false
            // Told to come back, the client polls at the server's `retryAfter` (2 s), on the other instance.
            try await waitUntil(
                "user\(index)'s batch \(batch) is acknowledged", timeout: .seconds(300), poll: .seconds(2)
            ) {
                do {
                    let response = try await client.modifyRecords(request)
                    if !response.failedRecordSaves.isEmpty {
                        observed.withLock {
                            $0.unexpected.append("user\(index): \(response.failedRecordSaves.prefix(2))")
                        }
                    }
                    observed.withLock {
                        $0.acknowledged["user\(index)", default: []].formUnion(records.map(\.recordID.recordName))
                        $0.batchesDone += 1
                    }
                    return true
                } catch let error as SyncError where error.code == .serviceUnavailable && error.retryAfter == 2 {
                    observed.withLock { _ = $0.toldToRetry.insert(index) }
                    let next = (instances.firstIndex(of: client.baseURL) ?? 0) + 1
                    client.baseURL = instances[next % instances.count]
                    return false
                } catch {
                    observed.withLock { $0.unexpected.append("user\(index) batch \(batch): \(error)") }
                    failed = true
                    return true
                }
            }
            if failed { return }
        }
    }
}

@Suite(
    "PostgreSQL restarted under load", .aheadOfTheCrowd,
    .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
struct PostgresRestartTests {
    @Test(
        "PostgreSQL stopped and started while 8 clients write over 2 instances: requests fail with retryAfter, then recover; no acknowledged write is lost; the engines converge"
    )
    func restartUnderLoad() async throws {
        let cluster = try await PostgresCluster.start()
        defer { cluster.remove() }
        try await DatabaseOutage.run(
            .init(
                kind: .stopped, url: cluster.url, lose: { try await cluster.stop() },
                recover: { try await cluster.startServer() }))
    }
}
