import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// The statuses openapi.yaml promises where HTTP itself has a say: a refused push upgrade is a 401
/// with the error body, a plain GET of the push route is a 426, a method a path does not have is a
/// 405 with `Allow`, and an unknown path stays a 404.
@Suite("HTTP statuses", .onEveryBackend)
struct HTTPStatusTests {
    /// What a WebSocket client sends to open a socket (RFC 6455).
    static let upgradeHeaders = [
        ("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("Sec-WebSocket-Version", "13"),
    ]

    @Test("a push upgrade without a token, or with a bad one, is a 401 with the error body")
    func pushUpgradeNeedsAToken() async throws {
        try await withServer(transport: .loopback) { server, _ in
            for authorization in [[], [("Authorization", "Bearer not-a-token")], [("Authorization", "Basic abc")]] {
                let answer = try await RawHTTP.exchange(
                    port: server.port, "GET", "/v1/push", headers: Self.upgradeHeaders + authorization)
                #expect(answer.status == 401, "\(authorization)")
                #expect(answer.error?.code == .notAuthenticated, "\(String(decoding: answer.body, as: UTF8.self))")
                #expect((answer.error?.message.count ?? 0) > 20, "a message to act on")
                #expect(answer.header("Content-Type")?.hasPrefix("application/json") == true)
            }
            // The server still answers, and a real push socket still opens.
            let ada = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
            let socket = try await ada.openPush()
            #expect(!socket.isClosed)
            socket.close()
        }
    }

    @Test("an upgrade request to a path that takes no WebSocket gets that path's error, with a body")
    func upgradeElsewhereIsRefusedWithABody() async throws {
        try await withServer(transport: .loopback) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let token = try #require(ada.token)
            let unknown = try await RawHTTP.exchange(
                port: server.port, "GET", "/v1/nothing-here", headers: Self.upgradeHeaders)
            #expect(unknown.status == 404)
            #expect(unknown.error != nil)
            let plainRoute = try await RawHTTP.exchange(
                port: server.port, "GET", "/v1/account",
                headers: Self.upgradeHeaders + [("Authorization", "Bearer \(token)")])
            #expect(plainRoute.status == 400)
            #expect(plainRoute.error?.code == .invalidArguments)
            #expect(plainRoute.error?.message.contains("/v1/push") == true)
        }
    }

    @Test("GET /v1/push without the upgrade is a 426 naming the upgrade; without a token, a 401")
    func pushWithoutUpgrade() async throws {
        try await withServer(transport: .loopback) { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let answer = try await ada.send(.get, "/v1/push")
            #expect(answer.status == 426)
            #expect(answer.header("Upgrade")?.lowercased() == "websocket")
            #expect(answer.error?.code == .invalidArguments)
            #expect(answer.error?.message.contains("WebSocket") == true)

            let anonymousAnswer = try await anonymous.send(.get, "/v1/push")
            #expect(anonymousAnswer.status == 401)
            #expect(anonymousAnswer.error?.code == .notAuthenticated)
        }
    }

    @Test("a method a path does not have is a 405 with Allow and an error body; an unknown path is a 404")
    func wrongMethod() async throws {
        try await withServer(transport: .loopback) { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let cases: [(RequestMethod, String, String)] = [
                (.delete, "/v1/accounts", "POST"),
                (.get, "/v1/sessions", "POST"),
                (.post, "/v1/health", "GET"),
                (.put, "/v1/limits", "GET"),
                (.get, "/v1/sessions/current", "DELETE"),
                (.patch, "/v1/account", "GET"),
                (.post, "/v1/push", "GET"),
                (.get, "/v1/databases/private/zones/list", "POST"),
                (.delete, "/v1/databases/shared/records/modify", "POST"),
                (.patch, "/v1/account/password", "PUT"),
                (.post, "/v1/account/sessions/0123abcd", "DELETE"),
                // A literal path beside a parameter one: end-others is not a session ID.
                (.get, "/v1/account/sessions/end-others", "POST"),
            ]
            for (method, path, allowed) in cases {
                // Signed in or not: which methods a path has is no secret.
                for client in [anonymous, ada] {
                    let answer = try await client.send(method, path)
                    #expect(answer.status == 405, "\(method) \(path)")
                    #expect(answer.header("Allow") == allowed, "\(method) \(path)")
                    #expect(answer.error?.code == .invalidArguments, "\(method) \(path)")
                    #expect(answer.error?.message.contains(allowed) == true, "\(method) \(path)")
                }
            }
            for path in ["/v1/nothing-here", "/v1/databases/private/zones", "/v1/databases/private/zones/list/more"] {
                let answer = try await ada.send(.get, path)
                #expect(answer.status == 404, "\(path)")
                #expect(answer.header("Allow") == nil, "\(path)")
                #expect(answer.error != nil, "\(path)")
            }
        }
    }
}
