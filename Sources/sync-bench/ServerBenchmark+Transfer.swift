import ArgumentParser
import Foundation
import SyncCore
import SyncTesting

extension ServerBenchmark {
    /// Every client uploads its records in batches, all at once; then every client downloads them a page at a
    /// time, all at once, as `TestClient`'s calls do. Each request names its answer (for the plain HTTP
    /// reference); the answers come back with the figures, by name. The uploads' answers are checked once
    /// the upload's clock has stopped (``PreparedUpload``).
    func transfer(
        _ uploads: [PreparedUpload], zone: RecordZone.ID, accounts: [TestClient], server: ServerProcess
    ) async throws -> (Transfer, answers: [String: HTTPAnswer]) {
        let page = page
        let counts = uploads.map { $0.counts.reduce(0, +) }
        let count = counts.reduce(0, +)
        var answers: [String: HTTPAnswer] = [:]
        func everyClient(
            _ phase: String, _ work: @escaping @Sendable (Int, Exchanger) async throws -> Void
        ) async throws {
            let answered = try await withThrowingTaskGroup(of: [String: HTTPAnswer].self) { group in
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
            let upload = uploads[index]
            for body in upload.bodies {
                _ = try await exchanger.post(.modifyRecords, body, headers: [upload.writerHeader])
            }
        }
        let uploadTime = ContinuousClock.now - uploadStart
        let uploadCPU = cpu.next()
        for (index, upload) in uploads.enumerated() {
            try upload.check(upload.bodies.indices.compactMap { answers["up.\(index).\($0)"] }, client: index)
        }
        // The checks' CPU is nobody's in the figures.
        _ = cpu.next()

        let downloadStart = ContinuousClock.now
        try await everyClient("down") { index, exchanger in
            var token: ServerChangeToken?
            var fetched = 0
            while true {
                let request = FetchZoneChangesRequest(zoneID: zone, since: token, resultsLimit: page)
                let response = try await exchanger.post(.fetchZoneChanges, try JSONEncoder().encode(request))
                    .decoded(as: FetchZoneChangesResponse.self)
                fetched += response.modifications.count
                token = response.changeToken
                if !response.moreComing { break }
            }
            guard fetched == counts[index] else {
                throw ValidationError("client \(index) fetched \(fetched) records, expected \(counts[index])")
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
    private(set) var answers: [String: HTTPAnswer] = [:]

    init(client: TestClient, name: String) {
        self.client = client
        self.name = name
    }

    func post(_ endpoint: Endpoint, _ body: Data, headers: [(String, String)] = []) async throws -> HTTPAnswer {
        let key = "\(name).\(answers.count)"
        let answer = try await client.send(
            endpoint, ["scope": "private"], body: body,
            headers: [(ReferenceServerCommand.answerHeader, key)] + headers)
        answers[key] = answer
        return answer
    }
}
