import Foundation
import SyncCore
import SyncTesting
import Testing

/// Instances are processes that can die. Needs PostgreSQL (several instances share only it) and the
/// built `sync-server`.
@Suite(
    "An instance killed under load",
    .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
struct InstanceFailoverTests {
    static let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("sync-server").path
    static let clients = 8
    static let batches = 30
    static let batch = 50

    @Test(
        "kill -9 of one of two instances while 8 clients write: they go on on the other, and no acknowledged write is lost"
    )
    func killOneInstance() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.executable), "build sync-server first")
        let name = TestPostgres.databaseName(for: "failover-\(UUID())")
        try await TestPostgres.createDatabase(name)
        let url = try TestPostgres.url(database: name)
        let doomed = try await ServerProcess.start(executable: Self.executable, database: url)
        let survivor = try await ServerProcess.start(executable: Self.executable, database: url)
        defer {
            doomed.stop()
            survivor.stop()
        }
        let instances = [doomed.baseURL, survivor.baseURL]
        let acknowledged = Shared<[String: Set<String>]>([:])
        let batchesDone = Shared(0)
        let moves = Shared(0)
        let zone = RecordZone.ID(zoneName: "Load")

        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<Self.clients {
                let first = try await TestClient(baseURL: instances[index % 2]).signedUp(username: "user\(index)")
                try await first.saveZones("Load")
                group.addTask {
                    var client = first
                    for batch in 0..<Self.batches {
                        let records = (0..<Self.batch).map { item in
                            var record = RecordValue(
                                recordType: "Item",
                                recordID: RecordValue.ID(recordName: "b\(batch)-\(item)", zoneID: zone))
                            record["n"] = .int64(Int64(item))
                            return record
                        }
                        // One ID for every try of this batch: a retry of a write that did commit is
                        // answered from the first answer, and applies nothing twice.
                        let request = ModifyRecordsRequest(saves: records, clientRequestID: "user\(index)-\(batch)")
                        let response = try await Self.send(request, with: &client, instances: instances, moves: moves)
                        try #require(response.failedRecordSaves.isEmpty, "\(response.failedRecordSaves.prefix(2))")
                        acknowledged.withLock {
                            $0["user\(index)", default: []].formUnion(records.map(\.recordID.recordName))
                        }
                        batchesDone.withLock { $0 += 1 }
                    }
                }
            }
            // Mid-load: once a third of the batches are acknowledged, not after a time.
            try await waitUntil("a third of the batches are written") {
                batchesDone.current >= Self.clients * Self.batches / 3
            }
            doomed.kill()
            try await group.waitForAll()
        }

        let written = acknowledged.current
        #expect(moves.current >= Self.clients / 2, "the clients of the killed instance moved to the other")
        for index in 0..<Self.clients {
            let client = try await TestClient(baseURL: survivor.baseURL).signedIn(username: "user\(index)")
            let stored = Set(try await client.fetchAllZoneChanges(zone).modifications.map(\.recordID.recordName))
            let mine = written["user\(index)"] ?? []
            #expect(mine.count == Self.batches * Self.batch, "user\(index) got every batch acknowledged")
            #expect(
                mine.subtracting(stored).isEmpty,
                "user\(index) lost \(mine.subtracting(stored).count) acknowledged records")
        }
        try await TestPostgres.dropDatabase(name)
    }

    /// Sends `request`; when the instance cannot be reached, the client moves to the next instance and
    /// sends the same request again, as a client behind a load balancer would see it.
    static func send(
        _ request: ModifyRecordsRequest, with client: inout TestClient, instances: [String], moves: Shared<Int>
    )
        async throws -> ModifyRecordsResponse
    {
        var lastError: (any Error)?
        for _ in 0..<(instances.count * 3) {
            try Task.checkCancellation()
            do {
                return try await client.modifyRecords(request)
            } catch let error as SyncError
                where [.networkFailure, .networkUnavailable, .serviceUnavailable].contains(error.code)
            {
                lastError = error
                moves.withLock { $0 += 1 }
                let next = (instances.firstIndex(of: client.baseURL) ?? 0) + 1
                client.baseURL = instances[next % instances.count]
            }
        }
        throw lastError ?? SyncError(.internalError, "no instance answered")
    }
}
