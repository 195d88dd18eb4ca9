import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// Password guessing is slow: failed sign-ins are throttled per username and per address, and
/// account creation per address. Time is a `TestClock` the test moves, so every wait is exact and
/// nothing depends on how fast the machine is.
@Suite("Guessing is slow", .onEveryBackend)
struct SignInThrottleTests {
    private static let password = "correct horse battery"

    /// A server whose sessions and throttles go by `clock`.
    private func configuration(clock: TestClock) -> SyncServerConfiguration {
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: Date())
        return configuration
    }

    private func signIn(_ client: TestClient, _ username: String, _ password: String) async throws -> HTTPAnswer {
        try await client.send(
            .post, "/v1/sessions",
            body: try JSONEncoder().encode(AccountCredentials(username: username, password: password)))
    }

    private func signIn(
        port: Int, from address: String, _ username: String, _ password: String, headers: [(String, String)] = []
    ) async throws -> RawHTTPAnswer {
        try await RawHTTP.exchange(
            port: port, from: address, "POST", "/v1/sessions", headers: headers,
            body: try JSONEncoder().encode(AccountCredentials(username: username, password: password)))
    }

    @Test(
        "wrong passwords: a few are free, then 429 with a retryAfter that doubles; the right one works after the wait")
    func wrongPasswordsWaitLonger() async throws {
        let clock = TestClock()
        var configuration = configuration(clock: clock)
        configuration.usernameSignInThrottle = .init(
            freeFailures: 3, initialDelay: .seconds(10), maximumDelay: .seconds(3600), forgetAfter: .seconds(86_400))
        try await withServer(configuration: configuration, transport: .loopback) { _, anonymous in
            _ = try await anonymous.signedUp(username: "ada", password: Self.password)

            // Three free failures, and the fourth is still checked (and answered 401).
            for attempt in 1...4 {
                let answer = try await signIn(anonymous, "ada", "wrong password \(attempt)")
                #expect(answer.status == 401, "attempt \(attempt)")
                #expect(answer.error?.code == .notAuthenticated)
            }

            // Now the username waits 10 s; even the right password is not checked meanwhile.
            var waits: [Double] = []
            let locked = try await signIn(anonymous, "ada", Self.password)
            #expect(locked.status == 429)
            #expect(locked.error?.code == .requestRateLimited)
            #expect(locked.header("Retry-After") == "10")
            waits.append(try #require(locked.error?.retryAfter))

            // Each failure after a wait doubles the next wait.
            for _ in 0..<2 {
                await clock.advance(by: .seconds(waits.last!))
                #expect(try await signIn(anonymous, "ada", "still wrong").status == 401)
                let answer = try await signIn(anonymous, "ada", "and again")
                #expect(answer.status == 429)
                waits.append(try #require(answer.error?.retryAfter))
            }
            #expect(waits == [10, 20, 40])

            // The same message whether the username exists or not.
            let nobody = try await signIn(anonymous, "nobody", "guess guess")
            #expect(nobody.status == 401)

            // After the wait the right password signs in, and the success clears the count.
            await clock.advance(by: .seconds(40))
            let ada = try await anonymous.signedIn(username: "ada", password: Self.password)
            #expect(try await ada.account().username == "ada")
            for _ in 1...3 {
                #expect(try await signIn(anonymous, "ada", "a fresh mistake").status == 401)
            }
        }
    }

    @Test("usernames are throttled one by one: another user at the same address signs in")
    func otherUsernamesAreUnaffected() async throws {
        let clock = TestClock()
        var configuration = configuration(clock: clock)
        configuration.usernameSignInThrottle = .init(
            freeFailures: 2, initialDelay: .seconds(60), maximumDelay: .seconds(3600), forgetAfter: .seconds(86_400))
        try await withServer(configuration: configuration, transport: .loopback) { _, anonymous in
            _ = try await anonymous.signedUp(username: "ada", password: Self.password)
            _ = try await anonymous.signedUp(username: "bob", password: Self.password)
            for _ in 0..<3 { _ = try await signIn(anonymous, "ADA", "wrong password") }
            // Usernames compare case-insensitively, here as everywhere.
            #expect(try await signIn(anonymous, "ada", Self.password).status == 429)
            #expect(try await signIn(anonymous, "bob", Self.password).status == 201)
        }
    }

    @Test("addresses are throttled by the connection, whatever the client's headers claim")
    func addressesAreThrottled() async throws {
        let clock = TestClock()
        var configuration = configuration(clock: clock)
        configuration.addressSignInThrottle = .init(
            freeFailures: 3, initialDelay: .seconds(30), maximumDelay: .seconds(3600), forgetAfter: .seconds(86_400))
        try await withServer(configuration: configuration, transport: .loopback) { server, anonymous in
            _ = try await anonymous.signedUp(username: "bob", password: Self.password)
            // 127.0.0.2 guesses at many usernames, a failure each: the username counts never fill up.
            for index in 0..<4 {
                let answer = try await signIn(port: server.port, from: "127.0.0.2", "user\(index)", "guess guess")
                #expect(answer.status == 401, "guess \(index)")
            }
            let locked = try await signIn(port: server.port, from: "127.0.0.2", "user9", "guess guess")
            #expect(locked.status == 429)
            #expect(locked.error?.code == .requestRateLimited)
            #expect(locked.error?.retryAfter == 30)
            #expect(locked.header("Retry-After") == "30")

            // Claiming to be someone else changes nothing: the server reads the connection's address.
            let forged = try await signIn(
                port: server.port, from: "127.0.0.2", "bob", Self.password,
                headers: [("X-Forwarded-For", "127.0.0.9"), ("X-Real-IP", "127.0.0.9"), ("Forwarded", "for=127.0.0.9")])
            #expect(forged.status == 429)

            // Another address is not held back: a wrong password is checked, the right one signs in.
            #expect(try await signIn(port: server.port, from: "127.0.0.3", "bob", "not it at all").status == 401)
            #expect(try await signIn(port: server.port, from: "127.0.0.3", "bob", Self.password).status == 201)
        }
    }

    @Test("16 clients guessing at once: most get 429 before any password is checked")
    func concurrentGuessesAreThrottled() async throws {
        let clock = TestClock()
        var configuration = configuration(clock: clock)
        configuration.usernameSignInThrottle = .init(
            freeFailures: 5, initialDelay: .seconds(1), maximumDelay: .seconds(900), forgetAfter: .seconds(86_400))
        configuration.passwordHashing = .init(concurrency: 2, queueLimit: 64)
        try await withServer(configuration: configuration, transport: .loopback) { _, anonymous in
            _ = try await anonymous.signedUp(username: "ada", password: Self.password)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<16 {
                    group.addTask { try await signIn(anonymous, "ada", "guess number \(index)").status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // The clock stands still, so a wait never runs out. A guess is checked only if it got a
            // hashing slot before the 6th failure was counted: at most 6 plus the other slot holder.
            #expect(Set(statuses).isSubset(of: [401, 429]), "\(statuses)")
            #expect(statuses.count(where: { $0 == 401 }) <= 7, "\(statuses.sorted())")
            #expect(statuses.count(where: { $0 == 429 }) >= 9, "\(statuses.sorted())")
        }
    }

    @Test("account creation is rate limited per address")
    func accountCreationIsRateLimited() async throws {
        var configuration = SyncServerConfiguration.testing
        // Two at once, then one an hour: the test cannot be slow enough to earn a third.
        configuration.accountCreationRateLimit = .init(requestsPerSecond: 1.0 / 3600, burst: 2)
        try await withServer(configuration: configuration, transport: .loopback) { server, anonymous in
            func create(_ username: String, from address: String) async throws -> RawHTTPAnswer {
                try await RawHTTP.exchange(
                    port: server.port, from: address, "POST", "/v1/accounts",
                    body: try JSONEncoder().encode(AccountCredentials(username: username, password: Self.password)))
            }
            #expect(try await create("ada", from: "127.0.0.2").status == 201)
            // A failed creation counts too: it still tells whether a username exists.
            #expect(try await create("ada", from: "127.0.0.2").status == 409)
            let limited = try await create("bob", from: "127.0.0.2")
            #expect(limited.status == 429)
            #expect(limited.error?.code == .requestRateLimited)
            #expect((limited.error?.retryAfter ?? 0) > 0)
            #expect(limited.header("Retry-After") != nil)

            // Signing in is a different limit, and another address may still create accounts.
            #expect(try await signIn(port: server.port, from: "127.0.0.2", "ada", Self.password).status == 201)
            #expect(try await create("bob", from: "127.0.0.3").status == 201)
        }
    }
}
