import Foundation
import SyncCore
import SyncServer
import SyncTesting
import Testing

@Suite("Push and rate limits")
struct PushAndRateLimitTests {
    private func next(_ connection: PushConnection, within timeout: Duration = .seconds(2)) async -> PushMessage? {
        await connection.next(within: timeout)?.message
    }

    @Test("a change reaches the owner's other connections within milliseconds, and nobody else's")
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

            let start = ContinuousClock.now
            try await laptop.save([contact("Grace")])
            let received = try #require(await phoneSocket.next())
            #expect(received.message.event == .databaseChanged)
            // Generous bound: the push is sent before the save's answer, so it normally takes about a millisecond.
            #expect(received.at - start < .milliseconds(500), "push took \(received.at - start)")

            // The device that made the change is not told about it; Bob hears nothing at all.
            #expect(await next(laptopSocket, within: .milliseconds(300)) == nil)
            #expect(await next(bobSocket, within: .milliseconds(300)) == nil)

            // A request that changes nothing pushes nothing: a failed delete, a zone that already exists.
            try await laptop.saveZones("Contacts")
            #expect(await next(phoneSocket, within: .milliseconds(300)) == nil)
            _ = try await phone.modifyRecords(
                ModifyRecordsRequest(deletes: [Record.ID(recordName: "nobody", zoneID: contactsZone)]))
            #expect(await next(laptopSocket, within: .milliseconds(300)) == nil)

            // Bob's change goes to Bob only.
            var bobsOther = try await anonymous.signedIn(username: "bob")
            bobsOther.deviceID = "bob-2"
            try await bobsOther.saveZones("Bob")
            #expect(await next(bobSocket)?.event == .databaseChanged)
            #expect(await next(phoneSocket, within: .milliseconds(300)) == nil)
            phoneSocket.close()
            laptopSocket.close()
            bobSocket.close()
        }
    }

    @Test("over the rate limit: 429 with Retry-After and retryAfter, then allowed again")
    func rateLimit() async throws {
        var configuration = SyncServerConfiguration.testing
        // Slow refill, so that a busy machine's slow requests cannot earn tokens back in time.
        configuration.userRateLimit = .init(requestsPerSecond: 0.5, burst: 3)
        try await withServer(configuration: configuration) { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            var limited: HTTPAnswer?
            for _ in 0..<10 {
                let answer = try await ada.send(.get, "/v1/account")
                if answer.status == 429 {
                    limited = answer
                    break
                }
            }
            let answer = try #require(limited)
            #expect(answer.error?.code == .requestRateLimited)
            let retryAfter = try #require(answer.error?.retryAfter)
            #expect(retryAfter > 0 && retryAfter <= 2)
            #expect(answer.header("Retry-After") == String(Int(retryAfter.rounded(.up))))
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
