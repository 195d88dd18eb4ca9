import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// The HTTP layer defends itself: raw sockets play slow, idle, oversized, malformed and too many
/// clients against the real server, with the limit under test set small. Each test waits for the
/// server's reaction (an answer, a closed connection) with a generous deadline and never asserts
/// how fast it came; each ends by checking that a normal request on a fresh connection still works.
@Suite("The HTTP layer defends itself", .onEveryBackend)
struct HTTPDefenseTests {
    /// A short timeout for the limit under test; the others stay long so they cannot interfere.
    static let short = Duration.milliseconds(300)

    /// The test settings with `change` applied to the HTTP limits.
    static func configuration(_ change: (inout SyncServerConfiguration) -> Void) -> SyncServerConfiguration {
        var configuration = SyncServerConfiguration.testing
        configuration.http.requestHeadTimeout = .seconds(60)
        configuration.http.idleTimeout = .seconds(60)
        configuration.http.requestBodyTimeout = .seconds(60)
        change(&configuration)
        return configuration
    }

    /// Checks that the server serves a normal request on a fresh connection.
    static func expectServerAnswers(_ server: TestServer, from source: String = "127.0.0.1") async throws {
        // With a head timeout of 300 ms, a loaded machine may let the timeout close the check's own
        // connection before its request is read: closed with no byte sent, as the server is told to do.
        // That asks again; any answer, or any other failure, is the result.
        var answer: RawHTTPAnswer?
        try await waitUntil("the server answers GET /v1/health after the abuse") {
            do {
                answer = try await RawHTTP.exchange(port: server.port, from: source, "GET", "/v1/health")
                return true
            } catch let failure as RawHTTP.Failure where failure.description.contains("after 0 bytes") {
                return false
            }
        }
        #expect(answer?.status == 200, "after the abuse, GET /v1/health answered \(String(describing: answer?.status))")
    }

    /// Checks that `outcome` is one answer with `status` and a JSON error body of `code`, that says
    /// the connection closes, and that the connection then closed.
    static func expectRefusal(_ outcome: RawConnection.Outcome, status: Int, code: SyncError.Code) throws {
        #expect(outcome.ending == .closed, "\(outcome)")
        let answer = try RawConnection.parse(outcome.bytes)
        #expect(answer.status == status, "\(outcome)")
        #expect(answer.error?.code == code, "\(outcome)")
        #expect(answer.header("Connection")?.lowercased() == "close", "\(outcome)")
        #expect(answer.header("Content-Type")?.hasPrefix("application/json") == true, "\(outcome)")
    }

    /// A WebSocket text frame as a client sends it (masked).
    static func maskedTextFrame(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        precondition(payload.count < 126)
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        return [0x81, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $1 ^ mask[$0 % 4] }
    }

    // MARK: Timeouts

    @Test("a client that sends its head a byte at a time is closed at the head timeout, however often it sends")
    func slowHead() async throws {
        try await withServer(
            configuration: Self.configuration { $0.http.requestHeadTimeout = Self.short }, transport: .loopback
        ) {
            server, _ in
            let connection = try await RawConnection.open(port: server.port)
            try await connection.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            // The client's own pace, much faster than the timeout: were each byte to restart the
            // clock, the connection would stay open for as long as the client liked.
            let drip = Task {
                while !Task.isCancelled {
                    do {
                        try await connection.send("X")
                    } catch {
                        return
                    }
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            defer { drip.cancel() }
            let outcome = await connection.readUntilEnded()
            #expect(outcome.wasEnded, "\(outcome)")
            #expect(outcome.bytes.isEmpty, "a half-sent request gets no answer: \(outcome)")
            try await Self.expectServerAnswers(server)
        }
    }

    @Test("a connection that sends nothing is closed at the head timeout")
    func silentConnection() async throws {
        try await withServer(
            configuration: Self.configuration { $0.http.requestHeadTimeout = Self.short }, transport: .loopback
        ) {
            server, _ in
            let connection = try await RawConnection.open(port: server.port)
            let outcome = await connection.readUntilEnded()
            #expect(outcome.wasEnded, "\(outcome)")
            #expect(outcome.bytes.isEmpty, "\(outcome)")
            try await Self.expectServerAnswers(server)
        }
    }

    @Test("a kept-alive connection with no next request is closed at the idle timeout")
    func idleConnection() async throws {
        try await withServer(
            configuration: Self.configuration { $0.http.idleTimeout = Self.short }, transport: .loopback
        ) { server, _ in
            let connection = try await RawConnection.open(port: server.port)
            try await connection.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let answer = try await connection.response()
            #expect(answer.status == 200)
            #expect(answer.header("Connection")?.lowercased() != "close", "the connection is kept alive")
            let outcome = await connection.readUntilEnded()
            #expect(outcome.wasEnded, "\(outcome)")
            #expect(outcome.bytes.isEmpty, "nothing more was sent: \(outcome)")
            try await Self.expectServerAnswers(server)
        }
    }

    @Test("a body that does not arrive within the body timeout closes the connection")
    func slowBody() async throws {
        try await withServer(
            configuration: Self.configuration { $0.http.requestBodyTimeout = Self.short }, transport: .loopback
        ) {
            server, _ in
            let connection = try await RawConnection.open(port: server.port)
            let body = #"{"username":"slow","password":"correct horse battery"}"#
            // All of the body but its last byte.
            try await connection.send(
                "POST /v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n" + body.dropLast())
            let outcome = await connection.readUntilEnded()
            #expect(outcome.wasEnded, "\(outcome)")
            // The route may not answer a request whose body never came; if anything is said, it
            // is not a success.
            if !outcome.bytes.isEmpty {
                #expect(try RawConnection.parse(outcome.bytes).status >= 400, "\(outcome)")
            }
            let signIn = try await RawHTTP.exchange(
                port: server.port, "POST", "/v1/sessions", body: Data(body.utf8))
            #expect(signIn.status == 401, "no account was made from part of a body")
            try await Self.expectServerAnswers(server)
        }
    }

    // MARK: Sizes

    @Test("a 1 MB header gets 431 with the JSON error body, and the connection closes")
    func hugeHeader() async throws {
        // The default limit, 16 KiB.
        try await withServer(configuration: Self.configuration { _ in }, transport: .loopback) { server, _ in
            let connection = try await RawConnection.open(port: server.port)
            let padding = String(repeating: "a", count: 1024 * 1024)
            try await connection.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: \(padding)\r\n\r\n")
            connection.finishSending()
            try Self.expectRefusal(await connection.readUntilEnded(), status: 431, code: .limitExceeded)
            try await Self.expectServerAnswers(server)
        }
    }

    @Test("a declared body over the limit GET /v1/limits states gets 413 limitExceeded before a byte of it is sent")
    func declaredBodyTooLarge() async throws {
        try await withServer(
            configuration: Self.configuration { $0.limits.maximumRequestBytes = 4096 }, transport: .loopback
        ) {
            server, _ in
            let limits = try JSONDecoder().decode(
                ServerLimits.self, from: try await RawHTTP.exchange(port: server.port, "GET", "/v1/limits").body)
            #expect(limits.maximumRequestBytes == 4096)
            func head(declaring length: String) -> String {
                "POST /v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(length)\r\n\r\n"
            }

            // Far over the limit: the answer comes at once, and the connection closes.
            for declared in ["10000000000", "18446744073709551615"] {
                let connection = try await RawConnection.open(port: server.port)
                // The head only: the answer must not wait for the body.
                try await connection.send(head(declaring: declared))
                let outcome = await connection.readUntilEnded()
                try Self.expectRefusal(outcome, status: 413, code: .limitExceeded)
                #expect(outcome.text.contains("\(limits.maximumRequestBytes)"), "the message names the limit")
            }

            // Just over the limit: the answer comes at once too; the body that follows is dropped
            // and the connection serves the next request.
            let connection = try await RawConnection.open(port: server.port)
            try await connection.send(head(declaring: "\(limits.maximumRequestBytes + 1)"))
            let refused = try await connection.response()
            #expect(refused.status == 413 && refused.error?.code == .limitExceeded, "\(refused.status)")
            try await connection.send(
                String(repeating: " ", count: limits.maximumRequestBytes + 1)
                    + "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(try await connection.response().status == 200)

            // At the limit exactly, the request reaches its route (which finds no valid JSON in it).
            let atLimit = try await RawHTTP.exchange(
                port: server.port, "POST", "/v1/accounts",
                body: Data(repeating: UInt8(ascii: " "), count: limits.maximumRequestBytes))
            #expect(atLimit.status == 400 && atLimit.error?.code == .invalidArguments, "\(atLimit.status)")
            try await Self.expectServerAnswers(server)
        }
    }

    @Test("a client that sends its whole oversized body before it reads (AsyncHTTPClient) gets the 413")
    func oversizedBodyFromHTTPClient() async throws {
        try await withServer(configuration: Self.configuration { _ in }, transport: .loopback) { _, client in
            for size in [3, 10] {
                let body = Data(repeating: UInt8(ascii: "a"), count: size * 1024 * 1024)
                let answer = try await client.send(.post, "/v1/accounts", body: body)
                #expect(answer.status == 413 && answer.error?.code == .limitExceeded, "\(size) MB: \(answer.status)")
            }
            #expect(try await client.send(.get, "/v1/health").status == 200)
        }
    }

    @Test("a chunked body that grows past the limit gets 413, and the connection closes without reading the rest")
    func chunkedBodyTooLarge() async throws {
        try await withServer(
            configuration: Self.configuration { $0.limits.maximumRequestBytes = 4096 }, transport: .loopback
        ) {
            server, _ in
            let connection = try await RawConnection.open(port: server.port)
            let chunk = "1000\r\n" + String(repeating: "a", count: 4096) + "\r\n"
            // Three chunks of 4 KiB and no end: a client that would go on forever.
            try await connection.send(
                "POST /v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n" + chunk + chunk + chunk)
            let outcome = await connection.readUntilEnded(within: .seconds(30))
            #expect(outcome.wasEnded, "the server does not wait for the rest of the body: \(outcome)")
            let answer = try RawConnection.parse(outcome.bytes)
            #expect(answer.status == 413 && answer.error?.code == .limitExceeded, "\(outcome)")
            #expect(answer.header("Connection")?.lowercased() == "close", "the answer says the connection closes")
            try await Self.expectServerAnswers(server)
        }
    }

    // MARK: Malformed HTTP

    @Test(
        "malformed requests get 400 invalidArguments and a closed connection",
        arguments: [
            ("a garbage request line", "HELLO WORLD\r\n\r\n"),
            ("a request line with no version", "GET /v1/health\r\nHost: 127.0.0.1\r\n\r\n"),
            (
                "Content-Length together with Transfer-Encoding",
                "POST /v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
            ),
            (
                "a Content-Length that is not a number",
                "POST /v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n"
            ),
            (
                "a Content-Length too large for 64 bits",
                "POST /v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999999999999999999\r\n\r\n"
            ),
            (
                "a negative Content-Length",
                "POST /v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n"
            ),
            (
                "two different Content-Lengths",
                "POST /v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"
            ),
            (
                "an upgrade to a protocol the server does not speak",
                "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"
            ),
            (
                "a WebSocket upgrade without its key",
                "GET /v1/push HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
            ),
        ])
    func malformed(_ what: String, _ request: String) async throws {
        try await withServer(configuration: Self.configuration { _ in }, transport: .loopback) { server, _ in
            let connection = try await RawConnection.open(port: server.port)
            try await connection.send(request)
            try Self.expectRefusal(await connection.readUntilEnded(), status: 400, code: .invalidArguments)
            try await Self.expectServerAnswers(server)
        }
    }

    @Test("a chunked body that breaks off into garbage gets 400 invalidArguments, not a server error")
    func brokenChunkedBody() async throws {
        try await withServer(configuration: Self.configuration { _ in }, transport: .loopback) { server, _ in
            let connection = try await RawConnection.open(port: server.port)
            try await connection.send(
                "POST /v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\nNOT A CHUNK SIZE\r\n")
            let outcome = await connection.readUntilEnded()
            #expect(outcome.wasEnded, "\(outcome)")
            let answer = try RawConnection.parse(outcome.bytes)
            #expect(answer.status == 400 && answer.error?.code == .invalidArguments, "\(outcome)")
            try await Self.expectServerAnswers(server)
        }
    }

    @Test(
        "after a request the decoder reads no further than, the answer says Connection: close and the connection ends",
        arguments: [
            ("a CONNECT", "CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 1),
            (
                "an upgrade to an unknown protocol on a later request",
                "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                    + "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: foo\r\n\r\n", 2
            ),
        ])
    func decoderStops(_ what: String, _ requests: String, _ answers: Int) async throws {
        try await withServer(configuration: Self.configuration { _ in }, transport: .loopback) { server, _ in
            let connection = try await RawConnection.open(port: server.port)
            // A request follows that the decoder will never read: it must not wait for an answer
            // until the idle timeout.
            try await connection.send(requests + "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            var last: RawHTTPAnswer?
            for _ in 0..<answers { last = try await connection.response() }
            #expect(last?.header("Connection")?.lowercased() == "close", "\(what)")
            let outcome = await connection.readUntilEnded(within: .seconds(30))
            #expect(outcome.wasEnded && outcome.bytes.isEmpty, "\(what): \(outcome)")
            try await Self.expectServerAnswers(server)
        }
    }

    @Test("a bad request after a good one on the same connection is refused after the good one's answer")
    func badRequestAfterGoodOne() async throws {
        try await withServer(
            configuration: Self.configuration { $0.limits.maximumRequestBytes = 4096 }, transport: .loopback
        ) {
            server, _ in
            for (second, status) in [
                ("POST /v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10000000000\r\n\r\n", 413),
                ("NOT HTTP AT ALL\r\n\r\n", 400),
                ("GET /v1/health HTTP/1.1\r\nX-Padding: \(String(repeating: "a", count: 64 * 1024))\r\n\r\n", 431),
            ] {
                let connection = try await RawConnection.open(port: server.port)
                // Both at once, as a pipelining client sends them.
                try await connection.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + second)
                connection.finishSending()
                let first = try await connection.response()
                #expect(first.status == 200)
                let outcome = await connection.readUntilEnded()
                #expect(outcome.ending == .closed, "\(outcome)")
                #expect(try RawConnection.parse(outcome.bytes).status == status, "\(outcome)")
            }
            try await Self.expectServerAnswers(server)
        }
    }

    // MARK: Connection limits

    @Test("connections over the per-address and server limits are closed at once, and admitted again once others close")
    func connectionLimits() async throws {
        let configuration = Self.configuration {
            $0.http.maximumConnectionsPerAddress = 3
            $0.http.maximumConnections = 5
        }
        try await withServer(configuration: configuration, transport: .loopback) { server, _ in
            /// A connection that completed a request and stays open (so it is surely counted).
            func admitted(from source: String) async throws -> RawConnection {
                let connection = try await RawConnection.open(port: server.port, from: source)
                try await connection.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                let answer = try await connection.response()
                #expect(answer.status == 200, "a connection from \(source) within the limits is served")
                return connection
            }
            /// What a new connection from `source` gets.
            func attempt(from source: String) async throws -> RawConnection.Outcome {
                let connection = try await RawConnection.open(port: server.port, from: source)
                try? await connection.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                return await connection.readUntilEnded()
            }

            var held = [RawConnection]()
            for _ in 0..<3 { held.append(try await admitted(from: "127.0.0.2")) }
            let fourth = try await attempt(from: "127.0.0.2")
            #expect(fourth.wasEnded && fourth.bytes.isEmpty, "a 4th connection from one address: \(fourth)")

            for _ in 0..<2 { held.append(try await admitted(from: "127.0.0.3")) }
            let sixth = try await attempt(from: "127.0.0.4")
            #expect(sixth.wasEnded && sixth.bytes.isEmpty, "a 6th connection to the server: \(sixth)")

            // One closes: a new connection from that address is admitted again, once the server
            // has seen the close.
            held.removeFirst().disconnect()
            var last = RawConnection.Outcome(bytes: Data(), ending: .stillOpen)
            try await waitUntil("a new connection from 127.0.0.2 is served after one of its three closed") {
                last = try await attempt(from: "127.0.0.2")
                return last.text.hasPrefix("HTTP/1.1 200")
            } observed: {
                "\(last)"
            }

            for connection in held { connection.disconnect() }
            try await waitUntil("the server serves new connections after every held one closed") {
                (try? await RawHTTP.exchange(port: server.port, from: "127.0.0.5", "GET", "/v1/health").status) == 200
            }
        }
    }

    // MARK: Push sockets

    /// Signs up a user with raw exchanges from `source`; returns the session token.
    static func signUp(_ server: TestServer, from source: String) async throws -> String {
        let credentials = try JSONEncoder().encode(
            AccountCredentials(username: "ada", password: "correct horse battery"))
        let created = try await answered("sign-up is answered") {
            try await RawHTTP.exchange(port: server.port, from: source, "POST", "/v1/accounts", body: credentials)
        }
        #expect(created.status == 201, "\(created.status)")
        let session = try await answered("sign-in is answered") {
            try await RawHTTP.exchange(port: server.port, from: source, "POST", "/v1/sessions", body: credentials)
        }
        return try JSONDecoder().decode(SessionInfo.self, from: session.body).token
    }

    /// Opens a push socket from `source` with a raw upgrade; returns once the server said
    /// `connected`.
    static func openPush(_ server: TestServer, token: String, from source: String) async throws -> RawConnection {
        try await answered("the push upgrade is answered") {
            let push = try await RawConnection.open(port: server.port, from: source)
            try await push.send(
                "GET /v1/push HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                    + "Authorization: Bearer \(token)\r\n\r\n")
            let upgrade = try await push.response()
            #expect(upgrade.status == 101)
            let hello = try JSONDecoder().decode(PushMessage.self, from: Data(try await push.webSocketText().utf8))
            #expect(hello.event == .connected)
            return push
        }
    }

    /// Makes a change as the user with `token`, so that the server pushes `databaseChanged`.
    static func changeSomething(_ server: TestServer, token: String, from source: String) async throws {
        let body = try JSONEncoder().encode(ModifyZonesRequest(saves: [RecordZone(zoneID: contactsZone)]))
        let change = try await answered("the change is answered") {
            try await RawHTTP.exchange(
                port: server.port, from: source, "POST", "/v1/databases/private/zones/modify",
                headers: [("Authorization", "Bearer \(token)")], body: body)
        }
        #expect(change.status == 200)
    }

    /// Runs `attempt` until the server answers it. With timeouts of a few hundred milliseconds, a
    /// client that a busy machine holds up between connecting and sending is rightly cut off; it
    /// tries again.
    static func answered<T>(_ what: String, _ attempt: () async throws -> T) async throws -> T {
        var result: T?
        var failure = "no attempt"
        try await waitUntil(what) {
            do {
                result = try await attempt()
                return true
            } catch {
                failure = "\(error)"
                return false
            }
        } observed: {
            failure
        }
        return result!
    }

    @Test("a push socket counts toward the connection limits")
    func pushSocketCounts() async throws {
        try await withServer(
            configuration: Self.configuration { $0.http.maximumConnectionsPerAddress = 2 }, transport: .loopback
        ) {
            server, _ in
            // Accounts and changes go through connections of their own, from another address.
            let token = try await Self.signUp(server, from: "127.0.0.3")
            let push = try await Self.openPush(server, token: token, from: "127.0.0.2")

            // The push socket and this one are the address's two connections: a third is refused.
            let second = try await RawConnection.open(port: server.port, from: "127.0.0.2")
            try await second.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(try await second.response().status == 200)
            let third = try await RawConnection.open(port: server.port, from: "127.0.0.2")
            try? await third.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let refused = await third.readUntilEnded()
            #expect(refused.wasEnded && refused.bytes.isEmpty, "a third connection: \(refused)")

            // The second one closes: the address has room for one more again, beside the push socket.
            second.disconnect()
            try await waitUntil("a new connection from 127.0.0.2 is served beside the push socket") {
                (try? await RawHTTP.exchange(port: server.port, from: "127.0.0.2", "GET", "/v1/health").status) == 200
            }
            // And the push socket works all along.
            try await Self.changeSomething(server, token: token, from: "127.0.0.3")
            let notice = try JSONDecoder().decode(PushMessage.self, from: Data(try await push.webSocketText().utf8))
            #expect(notice.event == .databaseChanged && notice.scope == .private)
            push.disconnect()
        }
    }

    @Test("a push socket has none of the HTTP timeouts, even when its client speaks on it")
    func pushSocketHasNoTimeouts() async throws {
        let configuration = Self.configuration {
            $0.http.requestHeadTimeout = Self.short
            $0.http.idleTimeout = Self.short
            $0.http.requestBodyTimeout = Self.short
        }
        try await withServer(configuration: configuration, transport: .loopback) { server, _ in
            let token = try await Self.signUp(server, from: "127.0.0.3")
            let push = try await Self.openPush(server, token: token, from: "127.0.0.2")
            // A client speaks on its socket now and then (a pong, a message): that is not the start
            // of an HTTP request with a deadline.
            try await push.send(Self.maskedTextFrame("still here"))

            // A connection opened after that, silent, is closed by the timeouts: by then the push
            // socket has been quiet longer than any of them.
            let silent = try await RawConnection.open(port: server.port, from: "127.0.0.4")
            let outcome = await silent.readUntilEnded()
            #expect(outcome.wasEnded, "the silent connection: \(outcome)")

            // The push socket still works: a change is announced on it.
            try await Self.changeSomething(server, token: token, from: "127.0.0.3")
            let notice = try JSONDecoder().decode(PushMessage.self, from: Data(try await push.webSocketText().utf8))
            #expect(notice.event == .databaseChanged && notice.scope == .private)
            push.disconnect()
        }
    }
}
