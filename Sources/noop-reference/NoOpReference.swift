import ArgumentParser
import AsyncHTTPClient
import Foundation
import GRDB
import NIOCore
import NIOHTTP1

/// The in-run reference of `sync-bench contacts`' sync with nothing to do: the least such a sync must do, with
/// the libraries `contacts` does it with, as a program of its own. It starts, parses its options with
/// ArgumentParser, opens the device's SQLite file with GRDB and reads one row, sends one request to the server
/// with AsyncHTTPClient (`GET /v1/health`), decodes its JSON answer, and prints one line. None of the app's
/// own work is in it: no keys, no engine state, no queued changes, one request where a sync sends several.
///
/// What `contacts` takes beyond it is the app's; what it takes itself is what a Swift program of this kind
/// takes on this machine: process start, the runtime's first uses of its types, a socket, one request.
@main
struct NoOpReference: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "noop-reference",
        abstract: "The least a sync with nothing to do must do: open a SQLite file, one request, its JSON answer.",
        discussion: "Started by `sync-bench contacts`, which times it beside `contacts sync` with nothing to do.")

    @Option(help: "The server's base URL, such as http://127.0.0.1:8080.")
    var server: String

    @Option(help: "A SQLite file to open and read one row of (a device's store).")
    var store: String

    /// The fields of the server's health answer a client reads.
    struct Health: Decodable {
        var status: String
        var version: String
    }

    /// The process's one client. Like the app's, it fails at once when the server refuses the connection,
    /// rather than trying again until the request's deadline.
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    func run() async throws {
        var configuration = Configuration()
        configuration.readonly = true
        let tables = try await DatabaseQueue(path: store, configuration: configuration).read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
        }
        var request = HTTPClientRequest(url: server.hasSuffix("/") ? server + "v1/health" : server + "/v1/health")
        request.method = .GET
        // As long as the app's requests wait (SyncClient's 60 s): on a machine as busy as a test run's, 10 s ran out.
        let response = try await Self.http.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else {
            throw ValidationError("the server at \(server) answered HTTP \(response.status.code) to GET /v1/health")
        }
        let health = try JSONDecoder().decode(Health.self, from: Data(body.readableBytesView))
        print("nothing new: \(tables) schema rows in \(store); sync-server \(health.version) (\(health.status))")
    }
}
