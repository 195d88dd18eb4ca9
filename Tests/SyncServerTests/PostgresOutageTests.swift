import Foundation
import Logging
import PostgresNIO
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// The database goes away under a running server, then comes back.
@Suite("PostgreSQL outage", .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
struct PostgresOutageTests {
    @Test("while the database refuses connections, requests get serviceUnavailable with retryAfter; then all recovers")
    func outageThenRecovery() async throws {
        let path = "outage-\(UUID())"
        let name = TestPostgres.databaseName(for: path)
        // Requests wait a second, not ten, for a connection the pool cannot make: the outage is what is
        // tested, not the length of the wait.
        var configuration = SyncServerConfiguration.testing
        configuration.databaseConnectionWait = .seconds(1)
        let server = try await TestServer.$backend.withValue(.postgres) {
            try await TestServer.start(configuration: configuration, storagePath: path)
        }
        let client = TestClient(baseURL: server.baseURL)
        var ada = try await whenAvailable {
            do {
                return try await client.signedUp(username: "ada")
            } catch let error as SyncError where error.code == .constraintViolation {
                // An attempt before this one made the account, then was refused at signing in.
                return try await client.signedIn(username: "ada")
            }
        }
        ada.deviceID = "laptop"
        try await whenAvailable { [ada] in try await ada.saveZones("Contacts") }
        try await whenAvailable { [ada] in try await ada.save([contact("before")]) }

        // As a PostgreSQL restart would: every connection ends, and no new one is let in.
        try await TestPostgres.execute("ALTER DATABASE \"\(name)\" WITH ALLOW_CONNECTIONS false")
        try await TestPostgres.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)'")
        var answer = try await ada.send(.post, "/v1/databases/private/zones/list", body: Data("{}".utf8))
        // A request may have been answered by a connection that had not noticed yet; the next ones cannot.
        try await waitUntil("a request is refused as unavailable") {
            answer = try await ada.send(.post, "/v1/databases/private/zones/list", body: Data("{}".utf8))
            return answer.status != 200
        } observed: {
            "HTTP \(answer.status): \(String(decoding: answer.body.prefix(300), as: UTF8.self))"
        }
        #expect(answer.status == 503, "\(String(decoding: answer.body.prefix(300), as: UTF8.self))")
        #expect(answer.error?.code == .serviceUnavailable)
        #expect(answer.error?.retryAfter == 2)
        #expect(answer.header("Retry-After") == "2")
        let write = await syncError { try await ada.save([contact("during")]) }
        #expect(write?.code == .serviceUnavailable, "\(String(describing: write))")

        try await TestPostgres.execute("ALTER DATABASE \"\(name)\" WITH ALLOW_CONNECTIONS true")
        try await waitUntil("requests succeed again once the database is back") {
            (try? await ada.send(.post, "/v1/databases/private/zones/list", body: Data("{}".utf8)))?.status == 200
        }
        try await whenAvailable { [ada] in try await ada.save([contact("after")]) }
        let contents = try await whenAvailable { [ada] in try await ada.contents() }
        #expect(Set(contents.keys) == ["before", "after"], "the refused write left nothing behind")
        try await server.stop()
        try await TestPostgres.dropDatabase(name)
    }
}

/// `step`'s result once the server had a database connection for it. With this test's one-second wait for
/// a connection, a machine busy with the rest of the suite (a debug build, two cores) can answer a request
/// outside the outage with serviceUnavailable; a client retries that, and so does this, until a generous
/// deadline. Any other error fails the test.
@discardableResult
private func whenAvailable<T>(_ step: () async throws -> T) async throws -> T {
    var result: T?
    var last = "no attempt yet"
    try await waitUntil("the request is served outside the outage", timeout: .seconds(120), poll: .milliseconds(50)) {
        do {
            result = try await step()
            return true
        } catch let error as SyncError where error.code == .serviceUnavailable {
            last = "\(error)"
            return false
        }
    } observed: {
        "the last answer: \(last)"
    }
    return result!
}
