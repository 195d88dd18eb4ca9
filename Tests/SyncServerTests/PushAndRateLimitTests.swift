import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

@Suite("Push and rate limits", .onEveryBackend)
struct PushAndRateLimitTests {
    private func next(_ connection: PushConnection) async -> PushMessage? {
        await connection.next()?.message
    }

    // How fast a push arrives is measured by `sync-bench`, not asserted here. That nothing arrived is
    // checked with a marker sent after the action: a socket's messages arrive in order.
    @Test("a change reaches the owner's other connections, once, and nobody else's")
    func pushReachesOwnerOnly() async throws {
        try await withServer(transport: .loopback) { server, anonymous in
            var laptop = try await anonymous.signedUp(username: "ada")
            laptop.deviceID = "laptop"
            var phone = try await laptop.signedIn(username: "ada")
            phone.deviceID = "phone"
            let bob = try await anonymous.signedUp(username: "bob")

            let phoneSocket = try await phone.openPush()
            let laptopSocket = try await laptop.openPush()
            let bobSocket = try await bob.openPush()
            #expect(await server.pushHub.connectionCount(user: try await laptop.account().userRecordName) == 2)

            try await laptop.saveZones("Contacts")
            #expect(await next(phoneSocket) == PushMessage(event: .databaseChanged, scope: .private))

            try await laptop.save([contact("Grace")])
            #expect(await next(phoneSocket) == PushMessage(event: .databaseChanged, scope: .private))

            // The device that made the change is not told about it; the phone is told once; Bob hears nothing.
            try await server.sendPushMarker(to: laptop)
            try await server.sendPushMarker(to: bob)
            #expect(try await laptopSocket.messagesBeforeMarker() == [])
            #expect(try await phoneSocket.messagesBeforeMarker() == [])
            #expect(try await bobSocket.messagesBeforeMarker() == [])

            // A request that changes nothing pushes nothing: a failed delete, a zone that already exists.
            try await laptop.saveZones("Contacts")
            _ = try await phone.modifyRecords(
                ModifyRecordsRequest(deletes: [RecordValue.ID(recordName: "nobody", zoneID: contactsZone)]))
            try await server.sendPushMarker(to: laptop)
            #expect(try await phoneSocket.messagesBeforeMarker() == [])
            #expect(try await laptopSocket.messagesBeforeMarker() == [])

            // Bob's change goes to Bob only.
            var bobsOther = try await anonymous.signedIn(username: "bob")
            bobsOther.deviceID = "bob-2"
            try await bobsOther.saveZones("Bob")
            #expect(await next(bobSocket)?.event == .databaseChanged)
            try await server.sendPushMarker(to: laptop)
            #expect(try await phoneSocket.messagesBeforeMarker() == [])
            #expect(try await laptopSocket.messagesBeforeMarker() == [])
            phoneSocket.close()
            laptopSocket.close()
            bobSocket.close()
        }
    }

    @Test("over the rate limit: 429 with Retry-After and retryAfter, and allowed again once that time has passed")
    func rateLimit() async throws {
        // The server's time stands still until the test moves it: no request earns a token back by being slow.
        let clock = TestClock()
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: Date())
        configuration.userRateLimit = .init(requestsPerSecond: 0.5, burst: 3)
        try await withServer(configuration: configuration, transport: .loopback) { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            for _ in 0..<3 { #expect(try await ada.send(.get, "/v1/account").status == 200, "within the burst") }
            let answer = try await ada.send(.get, "/v1/account")
            #expect(answer.status == 429)
            #expect(answer.error?.code == .requestRateLimited)
            #expect(answer.error?.retryAfter == 2, "one token comes back every 2 s")
            #expect(answer.header("Retry-After") == "2")

            await clock.advance(by: .seconds(1))
            let early = try await ada.send(.get, "/v1/account")
            #expect(early.status == 429, "not before retryAfter")
            #expect(early.error?.retryAfter == 1)
            await clock.advance(by: .seconds(1))
            #expect(try await ada.send(.get, "/v1/account").status == 200)
        }
    }

    @Test("sign-in attempts are rate limited per address")
    func signInRateLimit() async throws {
        var configuration = SyncServerConfiguration.testing
        // Time stands still: the bucket never refills, however slow the requests.
        configuration.clock = ServerClock(TestClock(), startingAt: Date())
        configuration.addressRateLimit = .init(requestsPerSecond: 0.05, burst: 3)
        try await withServer(configuration: configuration, transport: .loopback) { _, anonymous in
            var codes: [SyncError.Code] = []
            for _ in 0..<5 {
                if let error = await syncError({
                    _ = try await anonymous.signedIn(username: "x", password: "guess guess")
                }) {
                    codes.append(error.code)
                }
            }
            #expect(codes.filter { $0 == .notAuthenticated }.count == 3)
            #expect(codes.filter { $0 == .requestRateLimited }.count == 2)
        }
    }
}
