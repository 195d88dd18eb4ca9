import Foundation
import Logging
import ServiceLifecycle
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// Runs `body` with a client of a metrics listener of its own, as `--metrics-listen` starts one.
func withMetricsListener(_ body: (TestClient) async throws -> Void) async throws {
    var logger = Logger(label: "metrics-test")
    logger.logLevel = .critical
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let app = MetricsListener.makeApplication(
        host: "127.0.0.1", port: 0, logger: logger,
        onServerRunning: { port in
            continuation.yield(port)
            continuation.finish()
        })
    let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
    let task = Task {
        defer { continuation.finish() }
        try await group.run()
    }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else {
        try await task.value
        throw TestFailure("the metrics listener stopped before it listened")
    }
    do {
        try await body(TestClient(baseURL: "http://127.0.0.1:\(port)"))
    } catch {
        await group.triggerGracefulShutdown()
        try? await task.value
        throw error
    }
    await group.triggerGracefulShutdown()
    try await task.value
}

@Suite("Metrics and request IDs", .onEveryBackend)
struct MetricsTests {
    /// The value of the sample of `metric` whose labels contain each of `labels`.
    private func value(_ text: String, _ metric: String, _ labels: String...) -> Double? {
        text.split(separator: "\n").first { line in
            (line.hasPrefix(metric + "{") || line.hasPrefix(metric + " ")) && labels.allSatisfy { line.contains($0) }
        }.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
    }

    @Test("/metrics counts requests by route, errors by CloudKit code, push sockets and store latency")
    func metricsShowWhatHappened() async throws {
        try await withServer(transport: .loopback) { _, anonymous in
            try await withMetricsListener { metrics in
                try await metricsShowWhatHappened(anonymous, metrics)
            }
        }
    }

    private func metricsShowWhatHappened(_ anonymous: TestClient, _ metrics: TestClient) async throws {
        do {
            var ada = try await anonymous.signedUp(username: "ada")
            ada.deviceID = "laptop"
            let before = String(decoding: try await metrics.send(.get, "/metrics").body, as: UTF8.self)
            try await ada.saveZones("Contacts")
            try await ada.save([contact("Grace")])
            // An error with a CloudKit code: a zone that does not exist.
            let missing = await syncError {
                _ = try await ada.fetchZoneChanges(RecordZone.ID(zoneName: "Nowhere"))
            }
            #expect(missing?.code == .zoneNotFound)
            let socket = try await ada.openPush()
            defer { socket.close() }

            let answer = try await metrics.send(.get, "/metrics")
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type")?.hasPrefix("text/plain") == true)
            let text = String(decoding: answer.body, as: UTF8.self)
            let modify = ["records/modify", #"http_response_status_code="200""#]
            #expect(
                (value(text, "hb_requests", modify[0], modify[1]) ?? 0)
                    >= (value(before, "hb_requests", modify[0], modify[1]) ?? 0) + 1)
            let notFound = #"code="zoneNotFound""#
            #expect(
                (value(text, "sync_errors_total", notFound) ?? 0) >= (value(before, "sync_errors_total", notFound) ?? 0)
                    + 1)
            #expect((value(text, "sync_push_sockets") ?? 0) >= 1)
            #expect(text.contains(#"sync_store_duration_seconds_bucket{operation="modifyRecords""#))
            #expect(text.contains("http_server_request_duration_bucket"))
        }
    }

    @Test("the public listener answers /metrics as any unknown path; the metrics listener serves it and nothing else")
    func metricsOnlyOnTheirListener() async throws {
        try await withServer(transport: .loopback) { _, anonymous in
            let metrics = try await anonymous.send(.get, "/metrics")
            let elsewhere = try await anonymous.send(.get, "/nowhere")
            #expect(metrics.status == 404 && elsewhere.status == 404)
            // The same body as any path the server does not have, but for the path it names.
            let refusal = try JSONDecoder().decode(SyncError.self, from: metrics.body)
            let usual = try JSONDecoder().decode(SyncError.self, from: elsewhere.body)
            #expect(refusal.code == usual.code)
            #expect(refusal.message == usual.message.replacingOccurrences(of: "/nowhere", with: "/metrics"))
            #expect(!String(decoding: metrics.body, as: UTF8.self).contains("hb_requests"))
            try await withMetricsListener { listener in
                let served = try await listener.send(.get, "/metrics")
                #expect(served.status == 200 && String(decoding: served.body, as: UTF8.self).contains("# TYPE"))
                for (method, path) in [
                    (RequestMethod.get, "/v1/health"), (.post, "/v1/accounts"), (.get, "/v1/limits"),
                ] {
                    #expect(try await listener.send(method, path).status == 404, "\(path)")
                }
            }
        }
    }

    @Test("every answer carries its request's ID, errors included, and IDs differ")
    func requestIDs() async throws {
        try await withServer(transport: .loopback) { _, anonymous in
            let ok = try await anonymous.send(.get, "/v1/health")
            let refused = try await anonymous.send(.get, "/v1/account")
            #expect(refused.status == 401)
            let first = try #require(ok.header("X-Request-ID"), "\(ok.headers)")
            let second = try #require(refused.header("X-Request-ID"), "\(refused.headers)")
            #expect(!first.isEmpty && first != second)
        }
    }
}

/// `sync-server --metrics-listen`, as an operator runs it.
@Suite("sync-server --metrics-listen")
struct MetricsListenTests {
    @Test("the program serves /metrics on the --metrics-listen address only, never on its public port")
    func program() async throws {
        let directory = TemporaryFiles.path("metrics")
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProgram(
            ["--storage", directory + "/s.sqlite", "--port", "0", "--metrics-listen", "127.0.0.1:0"],
            log: directory + "/log", waitFor: ["listening on http://", "serves metrics at http://"])
        defer { server.stop() }
        let port = try #require(server.port(), "\(server.printed)")
        let text = server.printed
        let metricsPort = try #require(
            text.range(of: #"serves metrics at http://127\.0\.0\.1:\d+"#, options: .regularExpression).flatMap {
                Int(text[$0].split(separator: ":").last!)
            }, "\(text)")
        let publicAnswer = try await TestClient(baseURL: "http://127.0.0.1:\(port)").send(.get, "/metrics")
        #expect(publicAnswer.status == 404)
        let metrics = try await TestClient(baseURL: "http://127.0.0.1:\(metricsPort)").send(.get, "/metrics")
        #expect(metrics.status == 200 && String(decoding: metrics.body, as: UTF8.self).contains("# TYPE"))
    }
}
