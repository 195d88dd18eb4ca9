import ArgumentParser
import Foundation
import SyncCore
import SyncTesting

extension ServerBenchmark {
    /// Every client uploads its records in batches, all at once; then every client downloads them a page at a
    /// time, all at once, as `TestClient`'s calls do. Each request names its answer (for the plain HTTP
    /// reference); the answers come back with the figures, by name.
    func transfer(
        _ records: [[RecordValue]], zone: RecordZone.ID, accounts: [TestClient], server: ServerProcess
    ) async throws -> (Transfer, answers: [String: Data]) {
        let (batch, page) = (batch, page)
        let count = records.reduce(0) { $0 + $1.count }
        var answers: [String: Data] = [:]
        func everyClient(
            _ phase: String, _ work: @escaping @Sendable (Int, Exchanger) async throws -> Void
        ) async throws {
            let answered = try await withThrowingTaskGroup(of: [String: Data].self) { group in
                for (index, account) in accounts.enumerated() {
                    group.addTask {
                        let exchanger = Exchanger(client: account, name: "\(phase).\(index)")
                        try await work(index, exchanger)
                        return await exchanger.answers
                    }
                }
                return try await group.reduce(into: [:]) { $0.merge($1) { first, _ in first } }
            }
            answers.merge(answered) { first, _ in first }
        }

        var cpu = CPUReading(server: server)
        let uploadStart = ContinuousClock.now
        try await everyClient("up") { index, exchanger in
            let mine = records[index]
            for start in stride(from: 0, to: mine.count, by: batch) {
                let request = ModifyRecordsRequest(saves: Array(mine[start..<min(start + batch, mine.count)]))
                var writer = JSONWriter(capacity: 300 * (request.saves.count + 1))
                writer.modifyRecordsRequest(request)
                let response = try await exchanger.post("records/modify", Data(writer.bytes))
                    .decoded(as: ModifyRecordsResponse.self)
                guard response.failedRecordSaves.isEmpty else {
                    throw ValidationError("a save failed: \(response.failedRecordSaves[0].error)")
                }
            }
        }
        let uploadTime = ContinuousClock.now - uploadStart
        let uploadCPU = cpu.next()

        let downloadStart = ContinuousClock.now
        try await everyClient("down") { index, exchanger in
            var token: ServerChangeToken?
            var fetched = 0
            while true {
                let request = FetchZoneChangesRequest(zoneID: zone, since: token, resultsLimit: page)
                let response = try await exchanger.post("records/changes", try JSONEncoder().encode(request))
                    .decoded(as: FetchZoneChangesResponse.self)
                fetched += response.modifications.count
                token = response.changeToken
                if !response.moreComing { break }
            }
            guard fetched == records[index].count else {
                throw ValidationError("client \(index) fetched \(fetched) records, expected \(records[index].count)")
            }
        }
        let downloadTime = ContinuousClock.now - downloadStart
        let downloadCPU = cpu.next()
        let transfer = Transfer(
            upload: Double(count) / uploadTime.inSeconds, download: Double(count) / downloadTime.inSeconds,
            uploadCPU: uploadCPU, downloadCPU: downloadCPU)
        return (transfer, answers)
    }
}

/// One client's requests in a phase of a `sync-bench server` run: each names its answer (`PHASE.CLIENT.N`) in the plain HTTP
/// reference's header, and the answers are kept under those names.
private actor Exchanger {
    let client: TestClient
    let name: String
    private(set) var answers: [String: Data] = [:]

    init(client: TestClient, name: String) {
        self.client = client
        self.name = name
    }

    func post(_ operation: String, _ body: Data) async throws -> HTTPAnswer {
        let key = "\(name).\(answers.count)"
        let answer = try await client.send(
            .post, "/v1/databases/private/\(operation)", body: body,
            headers: [(ReferenceServerCommand.answerHeader, key)])
        answers[key] = answer.body
        return answer
    }
}
