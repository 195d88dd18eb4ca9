import ArgumentParser
import Foundation
import SyncCore
import SyncTesting

/// Measures what one wide record costs the server: saving, fetching through zone changes and
/// looking up a record of 1,000, 10,000 and 25,000 fields, each as wall time per request and as
/// the server process's CPU time per request (from /proc/PID/stat).
///
/// The server is the real `sync-server` executable in a child process, so its CPU time is its
/// own. Each save is a new record with every key in `changedKeys` and a `clientRequestID`, as the
/// engine sends them. Fields are small (`"f00000": {"type": "int64", "value": 7}`, 36 bytes of JSON each), so
/// that 25,000 of them stay under the server's 1 MiB per-record limit.
struct FieldsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fields",
        abstract: "Record server: save, fetch and lookup cost of one record with 1k, 10k and 25k fields.")

    @Option(parsing: .upToNextOption, help: "Field counts to measure.")
    var counts: [Int] = [1_000, 10_000, 25_000]

    @Option(help: "Requests of each kind per field count; the table shows the mean.")
    var repeats = 10

    @Option(help: "Path of the sync-server executable (default: next to this one).")
    var server: String?

    func validate() throws {
        guard repeats >= 1 else { throw ValidationError("--repeats must be at least 1") }
        guard counts.allSatisfy({ (1...99_999).contains($0) }) else {
            throw ValidationError("--counts must be between 1 and 99999")
        }
    }

    func run() async throws {
        let process = try await ServerProcess.start(executable: try ServerProcess.executable(server))
        defer { process.stop() }
        let client = try await TestClient(baseURL: process.baseURL).signedUp(username: "bench")
        print("sync-bench fields: one record per request, \(repeats) requests each, sync-server child process")
        print("(ms per request: wall time / server CPU time)")
        print("fields   body KiB      save wall/CPU   changes wall/CPU    lookup wall/CPU")
        for count in counts {
            let zone = RecordZone.ID(zoneName: "Fields\(count)")
            _ = try await client.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: zone)]))
            let bodies = (0..<repeats).map { Self.saveBody(fields: count, recordName: "wide-\($0)", zone: zone) }

            var index = 0
            let save = try await measure(process: process, repeats: repeats) {
                let answer = try await client.send(.modifyRecords, ["scope": "private"], body: bodies[index])
                index += 1
                try Self.check(answer, contains: "\"savedRecords\":[{", what: "save")
            }

            let changesBody = Data(#"{"zoneID":{"zoneName":"\#(zone.zoneName)"},"resultsLimit":1}"#.utf8)
            let changes = try await measure(process: process, repeats: repeats) {
                let answer = try await client.send(.fetchZoneChanges, ["scope": "private"], body: changesBody)
                try Self.check(answer, contains: "\"f\(String(format: "%05d", count - 1))\"", what: "fetch")
            }

            let lookupBody = Data(
                #"{"recordIDs":[{"recordName":"wide-0","zoneID":{"zoneName":"\#(zone.zoneName)"}}]}"#.utf8)
            let lookup = try await measure(process: process, repeats: repeats) {
                let answer = try await client.send(.lookupRecords, ["scope": "private"], body: lookupBody)
                try Self.check(answer, contains: "\"f\(String(format: "%05d", count - 1))\"", what: "lookup")
            }

            print(
                String(
                    format: "%6d  %9.0f  %7.1f / %6.1f  %7.1f / %6.1f  %7.1f / %6.1f", count,
                    Double(bodies[0].count) / 1024, save.wall, save.cpu, changes.wall, changes.cpu, lookup.wall,
                    lookup.cpu))
        }
    }

    /// Runs `request` `repeats` times; returns the mean wall time and server CPU time, in milliseconds.
    private func measure(
        process: ServerProcess, repeats: Int, _ request: () async throws -> Void
    ) async throws -> (wall: Double, cpu: Double) {
        let cpuBefore = process.cpuSeconds()
        let start = ContinuousClock.now
        for _ in 0..<repeats { try await request() }
        let wall = (ContinuousClock.now - start).inSeconds
        let cpu = process.cpuSeconds() - cpuBefore
        return (wall * 1000 / Double(repeats), cpu * 1000 / Double(repeats))
    }

    private static func check(_ answer: HTTPAnswer, contains marker: String, what: String) throws {
        guard answer.status == 200, answer.body.range(of: Data(marker.utf8)) != nil else {
            throw ValidationError(
                "the \(what) failed: HTTP \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
        }
    }

    /// A modify request saving one new record with `fields` small int64 fields.
    static func saveBody(fields: Int, recordName: String, zone: RecordZone.ID) -> Data {
        var record = RecordValue(recordType: "Wide", recordID: RecordValue.ID(recordName: recordName, zoneID: zone))
        for index in 0..<fields { record[String(format: "f%05d", index)] = .int64(Int64(index % 10)) }
        var writer = JSONWriter(capacity: 40 * fields + 256)
        // With a client request ID, as the engine sends every modification.
        writer.modifyRecordsRequest(ModifyRecordsRequest(saves: [record], clientRequestID: UUID().uuidString))
        return Data(writer.bytes)
    }
}
