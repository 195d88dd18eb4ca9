import Foundation
import SyncCore
import SyncTesting
import TestTraits
import Testing

@testable import SyncServer

/// The account's password and sessions, as a person (or a thief with a token) would use them through
/// the client library: a password change ends every other session and closes its push socket,
/// sessions can be listed and ended one by one, and each refused token says why.
@Suite("Account lifecycle: password and sessions", .onEveryBackend)
struct AccountLifecycleTests {
    static let password = "correct horse battery"

    /// The reason `body` was refused with, failing the test when it was not refused.
    static func refusal(_ body: () async throws -> Void) async -> SyncError? {
        await syncError(body)
    }

    @Test("a password change ends every other session and closes its push socket; the caller stays signed in")
    func passwordChangeEndsOtherSessions() async throws {
        try await withServer(transport: .loopback) { server, anonymous in
            let accounts = AccountClient(serverURL: try #require(URL(string: server.baseURL)))
            let laptop = try await accounts.signUp(username: "ada", password: Self.password, deviceLabel: "laptop")
            let phone = try await accounts.signIn(username: "ada", password: Self.password, deviceLabel: "phone")
            var phoneClient = anonymous
            phoneClient.token = phone.token
            phoneClient.deviceID = "phone"
            let phoneSocket = try await phoneClient.openPush()

            try await accounts.changePassword(
                token: laptop.token, oldPassword: Self.password, newPassword: "a much better password")

            try await waitUntil("the phone's push socket closes") {
                phoneSocket.isClosed
            } observed: {
                "closed: \(phoneSocket.isClosed); sockets: \(await server.pushHub.connectionCount(user: laptop.userRecordName))"
            }
            let refused = await Self.refusal { _ = try await accounts.account(token: phone.token) }
            #expect(refused?.code == .notAuthenticated)
            #expect(refused?.reason == .sessionEnded)
            #expect(refused?.message.contains("ended on another device") == true, "\(String(describing: refused))")
            // A push socket opened with the ended token is refused the same way.
            let reopened = try await RawHTTP.exchange(
                port: server.port, "GET", "/v1/push",
                headers: HTTPStatusTests.upgradeHeaders + [("Authorization", "Bearer \(phone.token)")])
            #expect(reopened.status == 401 && reopened.error?.reason == .sessionEnded)

            #expect(try await accounts.account(token: laptop.token).username == "ada")
            #expect(try await accounts.sessions(token: laptop.token).map(\.label) == ["laptop"])
            let old = await Self.refusal { _ = try await accounts.signIn(username: "ada", password: Self.password) }
            #expect(old?.code == .notAuthenticated)
            _ = try await accounts.signIn(username: "ada", password: "a much better password")
        }
    }

    @Test("a wrong old password changes nothing, answers permissionFailure, and is throttled with sign-ins")
    func wrongOldPassword() async throws {
        let clock = TestClock()
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: Date())
        configuration.usernameSignInThrottle.freeFailures = 2
        try await withServer(configuration: configuration) { server, _ in
            let accounts = AccountClient(serverURL: try #require(URL(string: server.baseURL)))
            let laptop = try await accounts.signUp(username: "ada", password: Self.password)
            let phone = try await accounts.signIn(username: "ada", password: Self.password)
            for attempt in 1...3 {
                let refused = await Self.refusal {
                    try await accounts.changePassword(
                        token: laptop.token, oldPassword: "guess number \(attempt)", newPassword: "stolen password!")
                }
                #expect(refused?.code == .permissionFailure, "attempt \(attempt): \(String(describing: refused))")
                #expect(refused?.message.contains("the password is unchanged") == true)
            }
            // Past the free failures even the right password waits, here and at sign-in alike.
            let waiting = await Self.refusal {
                try await accounts.changePassword(
                    token: laptop.token, oldPassword: Self.password, newPassword: "stolen password!")
            }
            #expect(waiting?.code == .requestRateLimited && waiting?.retryAfter != nil)
            let signIn = await Self.refusal { _ = try await accounts.signIn(username: "ada", password: Self.password) }
            #expect(signIn?.code == .requestRateLimited)
            // Nothing changed: both sessions work, and the old password is still the password.
            #expect(try await accounts.account(token: phone.token).username == "ada")
            await clock.advance(by: .seconds(3600))
            _ = try await accounts.signIn(username: "ada", password: Self.password)
            // The new password is checked as at account creation.
            let short = await Self.refusal {
                try await accounts.changePassword(token: laptop.token, oldPassword: Self.password, newPassword: "short")
            }
            #expect(short?.code == .invalidArguments && short?.message.hasPrefix("newPassword:") == true)
        }
    }

    @Test("sessions list their label, address and times, newest first, and mark the caller's")
    func listSessions() async throws {
        try await withServer { server, _ in
            let accounts = AccountClient(serverURL: try #require(URL(string: server.baseURL)))
            let laptop = try await accounts.signUp(username: "ada", password: Self.password, deviceLabel: "laptop")
            let phone = try await accounts.signIn(username: "ada", password: Self.password, deviceLabel: "Ada’s phone")
            _ = try await accounts.signUp(username: "grace", password: Self.password, deviceLabel: "grace's")

            let sessions = try await accounts.sessions(token: phone.token)
            #expect(sessions.map(\.label) == ["Ada’s phone", "laptop"])
            #expect(sessions.map(\.isCurrent) == [true, false])
            #expect(sessions.allSatisfy { $0.address == "127.0.0.1" && $0.lastUsedAt >= $0.createdAt })
            #expect(Set(sessions.map(\.id)).count == 2)
            // IDs are not the tokens, nor made from them.
            for session in sessions {
                #expect(session.id.count == 32 && session.id.allSatisfy(\.isHexDigit))
                #expect(!laptop.token.contains(session.id) && !phone.token.contains(session.id))
                for token in [laptop.token, phone.token] {
                    #expect(!AuthenticationMiddleware.hash(token: token).contains(session.id))
                }
            }
        }
    }

    @Test("ending a session by ID refuses its token with sessionEnded; a stranger's ID answers as an unknown one")
    func endSessionByID() async throws {
        try await withServer(transport: .loopback) { server, anonymous in
            let accounts = AccountClient(serverURL: try #require(URL(string: server.baseURL)))
            let laptop = try await accounts.signUp(username: "ada", password: Self.password, deviceLabel: "laptop")
            let stolen = try await accounts.signIn(username: "ada", password: Self.password, deviceLabel: "thief")
            let grace = try await accounts.signUp(username: "grace", password: Self.password)
            let graceID = try #require(try await accounts.sessions(token: grace.token).first?.id)

            // Another account's session and an ID no session has get the same answer, and nothing ends.
            let stranger = await Self.refusal { try await accounts.endSession(token: laptop.token, id: graceID) }
            let unknown = await Self.refusal {
                try await accounts.endSession(token: laptop.token, id: String(repeating: "0", count: 32))
            }
            #expect(stranger?.code == .unknownItem)
            #expect(stranger?.code == unknown?.code && stranger?.message == unknown?.message)
            let overlong = try await anonymous.send(
                .delete, "/v1/account/sessions/" + String(repeating: "a", count: 200), token: laptop.token)
            #expect(overlong.status == 404 && overlong.error?.code == .unknownItem)
            #expect(try await accounts.account(token: grace.token).username == "grace")

            var thief = anonymous
            thief.token = stolen.token
            let thiefSocket = try await thief.openPush()
            let thiefID = try #require(
                try await accounts.sessions(token: laptop.token).first { $0.label == "thief" }?.id)
            try await accounts.endSession(token: laptop.token, id: thiefID)
            try await waitUntil("the ended session's push socket closes") { thiefSocket.isClosed }
            let refused = await Self.refusal { _ = try await accounts.account(token: stolen.token) }
            #expect(refused?.reason == .sessionEnded && refused?.code == .notAuthenticated)
            #expect(try await accounts.sessions(token: laptop.token).map(\.label) == ["laptop"])

            // Ending one's own session is signing out: the token is then simply unknown.
            let laptopID = try #require(try await accounts.sessions(token: laptop.token).first?.id)
            try await accounts.endSession(token: laptop.token, id: laptopID)
            let signedOut = await Self.refusal { _ = try await accounts.account(token: laptop.token) }
            #expect(signedOut?.code == .notAuthenticated && signedOut?.reason == nil)
        }
    }

    @Test("ending every other session keeps the caller's and says how many ended")
    func endOtherSessions() async throws {
        try await withServer { server, _ in
            let accounts = AccountClient(serverURL: try #require(URL(string: server.baseURL)))
            let laptop = try await accounts.signUp(username: "ada", password: Self.password)
            let others = [
                try await accounts.signIn(username: "ada", password: Self.password),
                try await accounts.signIn(username: "ada", password: Self.password),
            ]
            let grace = try await accounts.signUp(username: "grace", password: Self.password)
            #expect(try await accounts.endOtherSessions(token: laptop.token) == 2)
            for other in others {
                #expect(
                    await Self.refusal { _ = try await accounts.account(token: other.token) }?.reason == .sessionEnded)
            }
            #expect(try await accounts.account(token: laptop.token).username == "ada")
            #expect(try await accounts.account(token: grace.token).username == "grace")
            #expect(try await accounts.endOtherSessions(token: laptop.token) == 0)
        }
    }

    @Test("a device label that is too long or holds control or bidi characters is refused at sign-in")
    func deviceLabels() async throws {
        try await withServer { server, _ in
            let accounts = AccountClient(serverURL: try #require(URL(string: server.baseURL)))
            _ = try await accounts.signUp(username: "ada", password: Self.password)
            for label in [String(repeating: "x", count: 101), "laptop\u{1B}[2J", "evil\u{202E}poptal", "two\nlines"] {
                let refused = await Self.refusal {
                    _ = try await accounts.signIn(username: "ada", password: Self.password, deviceLabel: label)
                }
                #expect(refused?.code == .invalidArguments, "\(label.debugDescription)")
                #expect(refused?.message.hasPrefix("deviceLabel:") == true)
            }
            let fits = try await accounts.signIn(
                username: "ada", password: Self.password, deviceLabel: String(repeating: "é", count: 100))
            #expect(try await accounts.sessions(token: fits.token).first?.label?.count == 100)
        }
    }

    @Test("a session ends at its absolute lifetime even when used every day; its push socket closes")
    func absoluteLifetime() async throws {
        let clock = TestClock()
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: Date())
        configuration.sessionLifetime = .seconds(3600)
        configuration.sessionMaxLifetime = .seconds(3 * 3600)
        try await withServer(configuration: configuration, transport: .loopback) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let socket = try await ada.openPush()
            for _ in 1...3 {
                await clock.advance(by: .seconds(50 * 60))
                #expect(try await ada.send(.get, "/v1/account").status == 200)
            }
            // 2 h 30 min in, used just now: only the absolute end, at 3 h, can end it.
            await clock.advance(by: .seconds(31 * 60))
            try await waitUntil("the push socket closes at the absolute end") {
                socket.isClosed
            } observed: {
                "closed: \(socket.isClosed); \(clock.sleeperCount) sleeper(s)"
            }
            let answer = try await ada.send(.get, "/v1/account")
            #expect(answer.status == 401)
            #expect(answer.error?.reason == .sessionExpired)
            #expect(answer.error?.message.contains("at most 3 hours") == true, "\(String(describing: answer.error))")
            // And it stays expired, not unknown, for the device that comes back later; the client
            // library hands the reason on.
            let accounts = AccountClient(serverURL: try #require(URL(string: server.baseURL)))
            let later = await Self.refusal { _ = try await accounts.account(token: try #require(ada.token)) }
            #expect(later?.code == .notAuthenticated && later?.reason == .sessionExpired)
            #expect(later?.reason?.endsSession == true)
            _ = server
        }
    }
}
