import Foundation
import SyncCore
import SyncTesting
import Testing

/// Change tokens under concurrent writers on several instances: a change committed after a reader was
/// handed a later token must still reach that reader. Needs PostgreSQL (several instances share only it).
@Suite(
    "Several instances, concurrent writers: tokens never skip a change",
    .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
struct ConcurrentWritersTests {
    static let writers = 8
    static let readers = 4
    /// 80 transactions of 125 records racing four readers: what the test needs is many commits overlapping
    /// reads, each long enough for a reader to fetch in between; more records only cost time (in a debug
    /// build, 50,000 records took a sixth of the whole suite's CPU).
    static let recordsPerWriter = 1_250
    static let batch = 125

    @Test("8 writers over 2 instances, 4 readers fetching all along: each reader gets every record exactly once")
    func tokensNeverSkip() async throws {
        let path = "concurrent-writers-\(UUID())"
        let (first, second) = try await TestServer.$backend.withValue(.postgres) {
            let first = try await TestServer.start(storagePath: path, transport: .inProcess)
            return (first, try await TestServer.start(storagePath: path, transport: .inProcess))
        }
        defer {
            Task {
                try await first.stop()
                try await second.stop()
                try await TestPostgres.dropDatabase(TestPostgres.databaseName(for: path))
            }
        }
        let owner = try await TestClient(baseURL: first.baseURL).signedUp(username: "ada")
        try await owner.saveZones("Load")
        let zone = RecordZone.ID(zoneName: "Load")
        let instances = [first.baseURL, second.baseURL]
        let writing = Shared(Self.writers)

        let seen = try await withThrowingTaskGroup(of: [String: Int]?.self) { group in
            for writer in 0..<Self.writers {
                group.addTask {
                    defer { writing.withLock { $0 -= 1 } }
                    var client = owner
                    client.baseURL = instances[writer % 2]
                    for start in stride(from: 0, to: Self.recordsPerWriter, by: Self.batch) {
                        let records = (start..<start + Self.batch).map { index in
                            var record = RecordValue(
                                recordType: "Item",
                                recordID: RecordValue.ID(recordName: "w\(writer)-\(index)", zoneID: zone))
                            record["n"] = .int64(Int64(index))
                            return record
                        }
                        let response = try await client.modifyRecords(ModifyRecordsRequest(saves: records))
                        try #require(response.failedRecordSaves.isEmpty, "\(response.failedRecordSaves.prefix(3))")
                    }
                    return nil
                }
            }
            for reader in 0..<Self.readers {
                group.addTask {
                    var client = owner
                    client.baseURL = instances[reader % 2]
                    var counts: [String: Int] = [:]
                    var token: ServerChangeToken?
                    while true {
                        // Whether the writers were done before this round began: then a round that
                        // ends with nothing more coming has seen everything.
                        let writersDone = writing.current == 0
                        var fetched = 0
                        while true {
                            let page = try await client.fetchZoneChanges(zone, since: token, resultsLimit: 400)
                            for record in page.modifications { counts[record.recordID.recordName, default: 0] += 1 }
                            fetched += page.modifications.count
                            token = page.changeToken
                            if !page.moreComing { break }
                        }
                        if writersDone { return counts }
                        // Paces the polling while writers write; not a wait for anything.
                        if fetched == 0 { try await Task.sleep(for: .milliseconds(20)) }
                    }
                }
            }
            var all: [[String: Int]] = []
            for try await counts in group { if let counts { all.append(counts) } }
            return all
        }

        let expected = Set(
            (0..<Self.writers).flatMap { writer in (0..<Self.recordsPerWriter).map { "w\(writer)-\($0)" } })
        let onServer = try await owner.fetchAllZoneChanges(zone, resultsLimit: 2_000).modifications
        #expect(Set(onServer.map(\.recordID.recordName)) == expected, "the server holds every record written")
        #expect(seen.count == Self.readers)
        for (reader, counts) in seen.enumerated() {
            let missed = expected.subtracting(counts.keys)
            let twice = counts.filter { $0.value > 1 }
            #expect(missed.isEmpty, "reader \(reader) missed \(missed.count), e.g. \(missed.sorted().prefix(5))")
            #expect(twice.isEmpty, "reader \(reader) got \(twice.count) twice, e.g. \(twice.keys.sorted().prefix(5))")
            #expect(counts.count == expected.count, "reader \(reader)")
        }
    }
}
