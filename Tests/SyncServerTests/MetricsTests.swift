import Foundation
import SyncCore
import SyncTesting
import Testing

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
        try await withServer { server, anonymous in
            var ada = try await anonymous.signedUp(username: "ada")
            ada.deviceID = "laptop"
            let before = String(decoding: try await anonymous.send(.get, "/metrics").body, as: UTF8.self)
            try await ada.saveZones("Contacts")
            try await ada.save([contact("Grace")])
            // An error with a CloudKit code: a zone that does not exist.
            let missing = await syncError {
                _ = try await ada.fetchZoneChanges(RecordZone.ID(zoneName: "Nowhere"))
            }
            #expect(missing?.code == .zoneNotFound)
            let socket = try await ada.openPush()
            defer { socket.close() }

            let answer = try await anonymous.send(.get, "/metrics")
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

    @Test("every answer carries its request's ID, errors included, and IDs differ")
    func requestIDs() async throws {
        try await withServer { _, anonymous in
            let ok = try await anonymous.send(.get, "/v1/health")
            let refused = try await anonymous.send(.get, "/v1/account")
            #expect(refused.status == 401)
            let first = try #require(ok.header("X-Request-ID"), "\(ok.headers)")
            let second = try #require(refused.header("X-Request-ID"), "\(refused.headers)")
            #expect(!first.isEmpty && first != second)
        }
    }
}
