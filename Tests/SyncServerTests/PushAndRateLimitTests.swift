import Foundation
import SyncCore
import SyncServer
import SyncTesting
import Testing

@Suite("Push and rate limits")
struct PushAndRateLimitTests {
    private func next(_ connection: PushConnection) async -> PushMessage? {
        await connection.next()?.message
    }

    // How fast a push arrives is measured by `sync-bench`, not asserted here. That nothing arrived is
    // checked with a marker sent after the action: a socket's messages arrive in order.
    @Test("a change reaches the owner's other connections, once, and nobody else's")
    func pushReachesOwnerOnly() async throws {
        try await withServer { server, anonymous in
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
                ModifyRecordsRequest(deletes: [Record.ID(recordName: "nobody", zoneID: contactsZone)]))
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

    @Test("over the rate limit: 429 with Retry-After and retryAfter, then allowed again")
    func rateLimit() async throws {
        var configuration = SyncServerConfiguration.testing
        // A slow refill: a request would have to take 4 s for the requests to earn their tokens back.
        configuration.userRateLimit = .init(requestsPerSecond: 0.25, burst: 3)
        try await withServer(configuration: configuration) { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            var limited: HTTPAnswer?
            for _ in 0..<100 {
                let answer = try await ada.send(.get, "/v1/account")
                if answer.status == 429 {
                    limited = answer
                    break
                }
            }
            let answer = try #require(limited)
            #expect(answer.error?.code == .requestRateLimited)
            let retryAfter = try #require(answer.error?.retryAfter)
            #expect(retryAfter > 0 && retryAfter <= 4)
            #expect(answer.header("Retry-After") == String(Int(retryAfter.rounded(.up))))
            // What a client does with retryAfter: wait that long, then try again. Waiting longer (a busy
            // machine) only refills more, so this cannot fail for being slow.
            try await Task.sleep(for: .seconds(retryAfter))
            #expect(try await ada.send(.get, "/v1/account").status == 200)
        }
    }

    @Test("sign-in attempts are rate limited per address")
    func signInRateLimit() async throws {
        var configuration = SyncServerConfiguration.testing
        configuration.addressRateLimit = .init(requestsPerSecond: 0.05, burst: 3)
        try await withServer(configuration: configuration) { _, anonymous in
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
