import Foundation
import NIOCore
import NIOHTTP1
import SyncCore

/// Signs up, in and out on a sync server: what an app's account screen needs before an engine
/// has credentials. Failures are ``SyncError``s, as everywhere in the engine.
public struct AccountClient: Sendable {
    public let serverURL: URL

    public init(serverURL: URL) {
        self.serverURL = serverURL
    }

    private func client(token: String? = nil) -> DatabaseClient {
        DatabaseClient(
            database: Database(serverURL: serverURL, credentials: token.map { .token($0) } ?? .none))
    }

    /// `GET /v1/health`: whether a sync server answers at ``serverURL``.
    public func health(timeout: Duration = .seconds(2)) async throws -> HealthInfo {
        let milliseconds = Int64(
            timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return try client().decode(
            HealthInfo.self,
            try await client().send(.GET, "/v1/health", body: nil, timeout: .milliseconds(milliseconds)))
    }

    /// Creates an account, then signs in to it.
    public func signUp(username: String, password: String) async throws -> SessionInfo {
        let credentials = AccountCredentials(username: username, password: password)
        _ = try await client().send(.POST, "/v1/accounts", body: Array(try JSONEncoder().encode(credentials)))
        return try await signIn(username: username, password: password)
    }

    /// Opens a session; its token goes in ``Database/Credentials``.
    public func signIn(username: String, password: String) async throws -> SessionInfo {
        let credentials = AccountCredentials(username: username, password: password)
        let data = try await client().send(.POST, "/v1/sessions", body: Array(try JSONEncoder().encode(credentials)))
        return try client().decode(SessionInfo.self, data)
    }

    /// Ends the session `token` belongs to on the server.
    public func signOut(token: String) async throws {
        _ = try await client(token: token).send(.DELETE, "/v1/sessions/current", body: nil)
    }

    /// Who `token` signs in as.
    public func account(token: String) async throws -> AccountInfo {
        try await client(token: token).account()
    }
}
