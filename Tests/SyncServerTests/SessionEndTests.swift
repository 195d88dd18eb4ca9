import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// Sessions end cleanly: signing out and a session's end close that session's push sockets, and
/// only those. Closing is awaited with a generous deadline, never timed.
@Suite("Sessions end cleanly", .onEveryBackend)
struct SessionEndTests {
    @Test("signing out closes that session's push socket; the same user's other session keeps its own")
    func signOutClosesPush() async throws {
        try await withServer(transport: .loopback) { server, anonymous in
            var laptop = try await anonymous.signedUp(username: "ada")
            laptop.deviceID = "laptop"
            var phone = try await anonymous.signedIn(username: "ada")
            phone.deviceID = "phone"
            let user = try await laptop.account().userRecordName
            let laptopSocket = try await laptop.openPush()
            let phoneSocket = try await phone.openPush()

            #expect(try await laptop.send(.delete, "/v1/sessions/current").status == 204)
            try await waitUntil("the signed-out session's push socket closes") {
                laptopSocket.isClosed
            } observed: {
                "closed: \(laptopSocket.isClosed); sockets of the user: \(await server.pushHub.connectionCount(user: user))"
            }
            #expect(try await laptop.send(.get, "/v1/account").status == 401)

            // The phone's session is another: its socket still hears changes, the phone's own included.
            #expect(!phoneSocket.isClosed)
            var other = try await anonymous.signedIn(username: "ada")
            other.deviceID = "desktop"
            try await other.saveZones("Contacts")
            #expect(await phoneSocket.next()?.message == PushMessage(event: .databaseChanged, scope: .private))
            #expect(await server.pushHub.connectionCount(user: user) == 1)
            phoneSocket.close()
        }
    }

    @Test("a session ends after its lifetime without requests: 401, and its push socket closes")
    func idleSessionEnds() async throws {
        let clock = TestClock()
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: Date())
        configuration.sessionLifetime = .seconds(3600)
        try await withServer(configuration: configuration, transport: .loopback) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let socket = try await ada.openPush()
            // The socket's timer sleeps until the session's end.
            try await waitUntil("the push socket waits for its session's end") {
                clock.sleeperCount == 1
            } observed: {
                "\(clock.sleeperCount) sleeper(s); socket closed: \(socket.isClosed)"
            }

            // A request after 40 minutes moves the end to 1 h 40 min: at 1 h the socket stays open
            // and waits again.
            await clock.advance(by: .seconds(40 * 60))
            #expect(try await ada.send(.get, "/v1/account").status == 200)
            await clock.advance(by: .seconds(20 * 60))
            try await waitUntil("the timer looks again and sleeps again, or the socket closes") {
                clock.sleeperCount == 1 || socket.isClosed
            } observed: {
                "\(clock.sleeperCount) sleeper(s)"
            }
            #expect(!socket.isClosed, "the session was used 20 minutes ago; it must not end yet")

            // An hour and 40 minutes after the last request, the session is over.
            await clock.advance(by: .seconds(100 * 60))
            try await waitUntil("the ended session's push socket closes") {
                socket.isClosed
            } observed: {
                "closed: \(socket.isClosed); \(clock.sleeperCount) sleeper(s)"
            }
            let answer = try await ada.send(.get, "/v1/account")
            #expect(answer.status == 401)
            #expect(answer.error?.code == .notAuthenticated)
            #expect(answer.error?.message.contains("sign in again") == true)
            // Signing in again gives a new session that works.
            let again = try await anonymous.signedIn(username: "ada")
            #expect(try await again.account().username == "ada")
            _ = server
        }
    }

    @Test("a push socket opened with an ended session is refused with 401")
    func endedSessionCannotOpenPush() async throws {
        let clock = TestClock()
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: Date())
        configuration.sessionLifetime = .seconds(3600)
        try await withServer(configuration: configuration, transport: .loopback) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            // Just past the end (dates are stored to the millisecond).
            await clock.advance(by: .seconds(3601))
            let answer = try await RawHTTP.exchange(
                port: server.port, "GET", "/v1/push",
                headers: HTTPStatusTests.upgradeHeaders + [("Authorization", "Bearer \(try #require(ada.token))")])
            #expect(answer.status == 401)
            #expect(answer.error?.code == .notAuthenticated)
        }
    }
}
