import Foundation
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// Storage usage under concurrent writers of one account: each write's count is taken in its own
/// transaction, so the account's usage equals the bytes the database holds and the bytes the
/// writers know they left, however their writes interleave, on one instance or on several.
@Suite("Storage quotas under concurrent writers")
struct QuotaConcurrencyTests {
    static let writers = 8
    static let rounds = 12
    static let batch = 40

    @Test("8 writers on SQLite: usage equals the sum of what was stored")
    func sqlite() async throws {
        try await TestServer.$backend.withValue(.sqlite) {
            let server = try await TestServer.start(transport: .inProcess)
            do {
                try await run(instances: [server])
                try await server.stop()
            } catch {
                try? await server.stop()
                throw error
            }
        }
    }

    @Test(
        "8 writers on 2 PostgreSQL instances: usage equals the sum of what was stored",
        .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
    func postgres() async throws {
        let path = "quota-writers-\(UUID())"
        let (first, second) = try await TestServer.$backend.withValue(.postgres) {
            let first = try await TestServer.start(storagePath: path, transport: .inProcess)
            return (first, try await TestServer.start(storagePath: path, transport: .inProcess))
        }
        do {
            try await run(instances: [first, second])
            try await first.stop()
            try await second.stop()
        } catch {
            try? await first.stop()
            try? await second.stop()
            try? await TestPostgres.dropDatabase(TestPostgres.databaseName(for: path))
            throw error
        }
        try await TestPostgres.dropDatabase(TestPostgres.databaseName(for: path))
    }

    /// Each writer saves records of its own of varying sizes, replaces some with larger or smaller
    /// versions and deletes others, on the instances in turn; every round's answers say what it left.
    private func run(instances: [TestServer]) async throws {
        let owner = try await TestClient(baseURL: instances[0].baseURL).signedUp(username: "ada")
        let ownerID = try await owner.account().userRecordName
        try await owner.saveZones("Load")
        let zone = RecordZone.ID(zoneName: "Load")

        let left = try await withThrowingTaskGroup(of: [String: Int64].self) { group in
            for writer in 0..<Self.writers {
                group.addTask {
                    var client = owner
                    client.baseURL = instances[writer % instances.count].baseURL
                    var generator = SeededGenerator(seed: UInt64(writer + 1))
                    // What this writer's records hold now, as stored: by name, their change tag and size.
                    var stored: [String: (tag: String?, size: Int64)] = [:]
                    for round in 0..<Self.rounds {
                        var saves: [RecordValue] = []
                        var deletes: [RecordValue.ID] = []
                        for index in 0..<Self.batch {
                            let name = "w\(writer)-\(index % (Self.batch / 2 + round))"
                            let id = RecordValue.ID(recordName: name, zoneID: zone)
                            if stored[name] != nil && Int.random(in: 0..<4, using: &generator) == 0 {
                                if !deletes.contains(id) && !saves.contains(where: { $0.recordID == id }) {
                                    deletes.append(id)
                                }
                                continue
                            }
                            guard !saves.contains(where: { $0.recordID == id }) && !deletes.contains(id) else {
                                continue
                            }
                            var record = RecordValue(recordType: "Item", recordID: id)
                            record["body"] = .string(
                                String(repeating: "b", count: Int.random(in: 0..<3_000, using: &generator)))
                            record.recordChangeTag = stored[name]?.tag
                            saves.append(record)
                        }
                        let response = try await client.modifyRecords(
                            ModifyRecordsRequest(saves: saves, deletes: deletes))
                        try #require(response.failedRecordSaves.isEmpty, "\(response.failedRecordSaves.prefix(3))")
                        try #require(response.failedRecordDeletes.isEmpty, "\(response.failedRecordDeletes.prefix(3))")
                        for saved in response.savedRecords {
                            stored[saved.recordID.recordName] = (
                                saved.recordChangeTag, Int64(FieldCoding.encode(saved.fields).count)
                            )
                        }
                        for id in response.deletedRecordIDs { stored[id.recordName] = nil }
                    }
                    return stored.mapValues(\.size)
                }
            }
            var all: [String: Int64] = [:]
            for try await sizes in group { all.merge(sizes) { first, _ in first } }
            return all
        }

        let expected = left.values.reduce(0, +)
        #expect(expected > 0)
        let onServer = try await owner.fetchAllZoneChanges(zone, resultsLimit: 2_000).modifications
        #expect(Set(onServer.map(\.recordID.recordName)) == Set(left.keys), "the server holds what the writers left")
        #expect(try await instances[0].storedFieldBytes(owner: ownerID) == expected, "the stored rows")
        for instance in instances {
            var client = owner
            client.baseURL = instance.baseURL
            let usage: StorageUsage = try await client.call(.get, "/v1/account/usage")
            #expect(usage.usedBytes == expected, "the usage counted, read on \(instance.baseURL)")
        }
    }
}

/// A small deterministic generator (SplitMix64), so that a failing run can be repeated.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
