import Foundation
import Logging
import PostgresNIO
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// Push between instances serving one PostgreSQL database (LISTEN/NOTIFY).
@Suite(
    "Push across instances", .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
struct PushAcrossInstancesTests {
    /// Runs `body` with two instances on one new database.
    func withTwoInstances(_ body: (TestServer, TestServer) async throws -> Void) async throws {
        let path = "push-across-\(UUID())"
        let (one, two) = try await TestServer.$backend.withValue(.postgres) {
            (try await TestServer.start(storagePath: path), try await TestServer.start(storagePath: path))
        }
        do {
            try await body(one, two)
        } catch {
            Issue.record(error)
        }
        try await one.stop()
        try await two.stop()
        try await TestPostgres.dropDatabase(TestPostgres.databaseName(for: path))
    }

    /// Ada's laptop, signed up on one instance, and her phone, signed in on another.
    func adasDevices(laptopOn first: TestServer, phoneOn second: TestServer) async throws -> (TestClient, TestClient) {
        var laptop = try await TestClient(baseURL: first.baseURL).signedUp(username: "ada")
        laptop.deviceID = "laptop"
        var phone = try await TestClient(baseURL: second.baseURL).signedIn(username: "ada")
        phone.deviceID = "phone"
        return (laptop, phone)
    }

    @Test("a write on instance 2 reaches a socket on instance 1; sign-out on 2 closes that session's socket on 1")
    func changesAndSignOutCrossInstances() async throws {
        try await withTwoInstances { one, two in
            let (laptop, phone) = try await adasDevices(laptopOn: one, phoneOn: two)
            let bob = try await TestClient(baseURL: one.baseURL).signedUp(username: "bob")
            let laptopSocket = try await laptop.openPush()
            let bobSocket = try await bob.openPush()

            try await phone.saveZones("Contacts")
            #expect(await laptopSocket.next()?.message == PushMessage(event: .databaseChanged, scope: .private))
            try await phone.save([contact("Grace")])
            #expect(await laptopSocket.next()?.message == PushMessage(event: .databaseChanged, scope: .private))
            // Bob, on the same instance as the laptop, heard nothing (the marker is sent after the writes).
            try await one.sendPushMarker(to: bob)
            #expect(try await bobSocket.messagesBeforeMarker() == [])

            // The laptop's session ends through instance 2: its socket on instance 1 closes.
            var laptopOnTwo = laptop
            laptopOnTwo.baseURL = two.baseURL
            let signedOut = try await laptopOnTwo.send(.delete, "/v1/sessions/current")
            #expect(signedOut.status == 204 || signedOut.status == 200, "\(signedOut.status)")
            try await waitUntil("the laptop's socket on instance 1 closes") { laptopSocket.isClosed }
            bobSocket.close()
        }
    }

    @Test("the relay's connection dropped: it connects again, every socket refetches, and pushes flow again")
    func relayReconnects() async throws {
        try await withTwoInstances { one, two in
            let (laptop, phone) = try await adasDevices(laptopOn: one, phoneOn: two)
            try await phone.saveZones("Contacts")
            let laptopSocket = try await laptop.openPush()

            // PostgreSQL ends every LISTENing backend, as a restart or a network cut would.
            let relay = try #require(one.pushRelay)
            let ended = try await terminateListeners(of: one)
            #expect(ended >= 1, "no LISTENing connection was found to end")
            // Notices sent meanwhile may be lost: the relay tells the socket to fetch both its databases
            // once it listens again.
            #expect(await laptopSocket.next()?.message == PushMessage(event: .databaseChanged, scope: .private))
            #expect(await laptopSocket.next()?.message == PushMessage(event: .databaseChanged, scope: .shared))
            try await waitUntil("instance 1's relay listens again") { relay.isListening }
            try await waitUntil("instance 2's relay listens again") { two.pushRelay?.isListening == true }
            try await phone.save([contact("after the reconnect")])
            #expect(await laptopSocket.next()?.message == PushMessage(event: .databaseChanged, scope: .private))
            laptopSocket.close()
        }
    }

    @Test("a write to a shared zone on instance 1 reaches the participant's socket on instance 2, and nobody else")
    func sharedZoneAcrossInstances() async throws {
        try await withTwoInstances { one, two in
            let ada = try await TestClient(baseURL: one.baseURL).signedUp(username: "ada")
            var grace = try await TestClient(baseURL: two.baseURL).signedUp(username: "grace")
            grace.deviceID = "grace-phone"
            let eve = try await TestClient(baseURL: two.baseURL).signedUp(username: "eve")
            try await ada.saveZones("Contacts")
            let share = try await ada.saveShare(
                SaveShareRequest(
                    zoneID: contactsZone,
                    participants: [
                        .init(userRecordName: try await grace.account().userRecordName, permission: .readOnly)
                    ]))
            try await grace.acceptShare(token: share.token)
            let graceSocket = try await grace.openPush()
            let eveSocket = try await eve.openPush()

            try await ada.save([contact("Alan")])
            #expect(await graceSocket.next()?.message == PushMessage(event: .databaseChanged, scope: .shared))
            try await two.sendPushMarker(to: eve)
            #expect(try await eveSocket.messagesBeforeMarker() == [], "a stranger hears nothing")
            graceSocket.close()
            eveSocket.close()
        }
    }

    /// Ends the database's LISTENing backends; returns how many.
    private func terminateListeners(of server: TestServer) async throws -> Int {
        // Over clusters, the relay listens on the main one.
        let store = try #require(server.postgresStores.first)
        return try await store.withConnection { connection in
            try await connection.query(
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()
                """, logger: store.logger
            ).collect().count
        }
    }
}
