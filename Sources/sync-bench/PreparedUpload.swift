import ArgumentParser
import Foundation
import SyncCore
import SyncTesting

/// One client's upload for the server benchmarks, as the sync engine sends it: batches of records, each
/// request with a `clientRequestID` of its own (the server keeps its answer for replays), `desiredKeys`
/// empty (the saved records come back with their system fields, not the fields sent) and the writer's
/// `X-Writer-ID`.
///
/// The bodies are written before the clock starts and the answers read after it stops, as a load
/// generator does: the figure is the server's, and the client's JSON work on the same two cores is
/// not. What is timed is the HTTP exchange alone.
struct PreparedUpload: Sendable {
    /// The request bodies, in the order they are sent.
    let bodies: [Data]
    /// How many records each body saves.
    let counts: [Int]
    /// The `X-Writer-ID` header the requests carry.
    let writerHeader: (String, String)

    /// - Parameter writer: the writer's ID, one per client.
    init(_ records: [RecordValue], batch: Int, writer: String) {
        var bodies: [Data] = []
        var counts: [Int] = []
        for start in stride(from: 0, to: records.count, by: batch) {
            let request = ModifyRecordsRequest(
                saves: Array(records[start..<min(start + batch, records.count)]),
                clientRequestID: UUID().uuidString, desiredKeys: [])
            var body = JSONWriter(capacity: 300 * (request.saves.count + 1))
            body.modifyRecordsRequest(request)
            bodies.append(Data(body.bytes))
            counts.append(request.saves.count)
        }
        self.bodies = bodies
        self.counts = counts
        writerHeader = ("X-Writer-ID", writer)
    }

    /// Checks the answers to ``bodies`` (in the same order), read once the clock has stopped: each must
    /// be a success that saved every record its request sent.
    func check(_ answers: [HTTPAnswer], client: Int) throws {
        guard answers.count == bodies.count else {
            throw ValidationError("client \(client) got \(answers.count) answers to \(bodies.count) requests")
        }
        for (index, answer) in answers.enumerated() {
            let response = try answer.decoded(as: ModifyRecordsResponse.self)
            if let failed = response.failedRecordSaves.first {
                throw ValidationError("client \(client), request \(index): a save failed: \(failed.error)")
            }
            guard response.savedRecords.count == counts[index] else {
                throw ValidationError(
                    "client \(client), request \(index): \(response.savedRecords.count) of \(counts[index]) saved")
            }
        }
    }

    /// Sends each client's upload at once, each client its requests in turn; the answers by client, and
    /// the seconds from the first request to the last answer (check them with ``check(_:client:)`` after).
    static func sendAll(_ uploads: [PreparedUpload], by clients: [TestClient]) async throws -> (
        answers: [Int: [HTTPAnswer]], seconds: Double
    ) {
        let start = ContinuousClock.now
        let answers = try await withThrowingTaskGroup(of: (Int, [HTTPAnswer]).self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    var answers: [HTTPAnswer] = []
                    let upload = uploads[index]
                    for body in upload.bodies {
                        answers.append(
                            try await client.send(
                                .modifyRecords, ["scope": "private"], body: body, headers: [upload.writerHeader]))
                    }
                    return (index, answers)
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        return (answers, (ContinuousClock.now - start).inSeconds)
    }
}
