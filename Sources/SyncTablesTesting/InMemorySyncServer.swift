import Foundation
import SyncClient
import SyncTesting

/// A sync server inside this process, for tests and previews: the same server code as `sync-server`,
/// answering requests in memory (no socket, no port, nothing to start), its storage in a temporary file
/// that ``stop()`` removes. Every ``container(username:)`` signs up an account of its own on it, so two
/// devices of one person, or two people, sync through it as they would through a real server.
///
/// ```swift
/// let server = try await InMemorySyncServer.start()
/// let sync = try TableSync(database: DatabaseQueue(), tables: tables,
///                          container: server.container(username: "ada"))
/// ```
public final class InMemorySyncServer: Sendable {
    let server: TestServer

    private init(server: TestServer) {
        self.server = server
    }

    /// Starts a server.
    public static func start() async throws -> InMemorySyncServer {
        InMemorySyncServer(server: try await TestServer.start(transport: .inProcess))
    }

    /// A container signed in to `username`'s account (made on first use), its encrypted values opened by
    /// `passphrase`.
    public func container(username: String, passphrase: String = "in-memory passphrase") -> Container {
        Container(
            identifier: "in-memory",
            configuration: ContainerConfiguration(
                serverURL: URL(string: server.baseURL)!, username: username, password: "password-\(username)",
                signUp: true, passphrase: passphrase))
    }

    /// Stops the server and removes its storage.
    public func stop() async throws {
        try await server.stop()
    }
}
