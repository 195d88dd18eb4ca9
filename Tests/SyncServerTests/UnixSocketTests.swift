import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SyncCore
import SyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `sync-server --unix-socket PATH`: the built program serves requests and push sockets on a Unix
/// domain socket only the user can open, alone or beside TCP, and keeps the socket file honest.
@Suite("sync-server on a Unix domain socket")
struct UnixSocketTests {
    /// Runs `body` with a new private directory (0700), removed afterwards.
    private func inDirectory(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "s1-\(UUID().uuidString.prefix(8))"
        )
        .path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await body(directory)
    }

    /// A request over the socket at `path`, with AsyncHTTPClient's `http+unix://`.
    private func request(
        _ socket: String, _ uri: String, method: HTTPMethod = .GET, body: Data? = nil, token: String? = nil
    ) async throws -> (status: Int, body: Data) {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let url = try #require(URL(httpURLWithSocketPath: socket, uri: uri))
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = method
            if let body {
                request.body = .bytes(ByteBuffer(bytes: body))
                request.headers.add(name: "Content-Type", value: "application/json")
            }
            if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
            let response = try await client.execute(request, timeout: .seconds(60))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            try await client.shutdown()
            return (Int(response.status.code), Data(bytes.readableBytesView))
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// Signs up and in over the socket; returns the session token.
    private func signedUp(_ socket: String, username: String) async throws -> String {
        let credentials = try JSONEncoder().encode(
            AccountCredentials(username: username, password: "correct horse battery"))
        let created = try await request(socket, "/v1/accounts", method: .POST, body: credentials)
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let session = try await request(socket, "/v1/sessions", method: .POST, body: credentials)
        #expect(session.status == 200 || session.status == 201, "\(String(decoding: session.body, as: UTF8.self))")
        return try JSONDecoder().decode(SessionInfo.self, from: session.body).token
    }

    /// Whether a socket is at `path`, and its permission bits; nil when nothing is there.
    private static func socketMode(_ path: String) -> (isSocket: Bool, permissions: Int)? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        return (
            attributes[.type] as? FileAttributeType == .typeSocket,
            (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
        )
    }

    @Test("alone: requests and the push socket work over it, it is 0600, no TCP port is open, SIGTERM removes it")
    func socketAlone() async throws {
        try await inDirectory { directory in
            let socket = directory + "/server.sock"
            let server = try await ServerProgram(
                ["--storage", directory + "/s.sqlite", "--unix-socket", socket], log: directory + "/log",
                waitFor: ["listening on unix socket \(socket)"])
            let mode = try #require(Self.socketMode(socket))
            #expect(mode.isSocket && mode.permissions == 0o600, "mode \(String(mode.permissions, radix: 8))")
            #expect(server.listeningTCPPorts.isEmpty, "TCP ports: \(server.listeningTCPPorts)")

            let health = try await request(socket, "/v1/health")
            #expect(health.status == 200)
            let token = try await signedUp(socket, username: "ada")
            let account = try await request(socket, "/v1/account", token: token)
            #expect(account.status == 200 && String(decoding: account.body, as: UTF8.self).contains("ada"))

            // The push socket: a WebSocket upgrade over the same socket, confirmed by the server.
            let push = try await UnixSocketConnection.exchange(
                socket,
                "GET /v1/push?device=laptop HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                    + "Authorization: Bearer \(token)\r\n\r\n",
                until: { String(decoding: $0, as: UTF8.self).contains("connected") })
            let text = String(decoding: push, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 101"), "\(text)")
            #expect(text.contains("connected"), "\(text)")

            #expect(server.stop() == 0, "\(server.printed)")
            #expect(Self.socketMode(socket) == nil, "the socket file is removed on a graceful stop")
        }
    }

    @Test("beside TCP when --port is given too: both serve the same store")
    func socketAndTCP() async throws {
        try await inDirectory { directory in
            let socket = directory + "/server.sock"
            let server = try await ServerProgram(
                ["--storage", directory + "/s.sqlite", "--unix-socket", socket, "--port", "0"],
                log: directory + "/log", waitFor: ["listening on unix socket", "listening on http://"])
            defer { server.stop() }
            let port = try #require(server.port(), "\(server.printed)")
            #expect(server.listeningTCPPorts == [port])
            _ = try await signedUp(socket, username: "ada")
            // Signed up over the socket, signed in over TCP: one store.
            let overTCP = try await TestClient(baseURL: "http://127.0.0.1:\(port)").signedIn(username: "ada")
            #expect(try await overTCP.account().username == "ada")
        }
    }

    @Test("a server already answering on the socket stops a second one; a stale socket is replaced; a file is refused")
    func socketFileStates() async throws {
        try await inDirectory { directory in
            let socket = directory + "/server.sock"
            let first = try await ServerProgram(
                ["--storage", directory + "/one.sqlite", "--unix-socket", socket], log: directory + "/one.log",
                waitFor: ["listening on unix socket"])
            let second = try await ChildProcess.run(
                [ServerProgram.path, "--storage", directory + "/two.sqlite", "--unix-socket", socket])
            #expect(second.status != 0)
            #expect(
                (second.output + second.error).contains("a server already answers on the socket \(socket)"),
                "\(second.output + second.error)")
            #expect(try await request(socket, "/v1/health").status == 200, "the first server still serves")

            // Killed: its socket file stays, and nobody answers on it. The next start replaces it.
            first.process.terminate(SIGKILL)
            first.process.wait()
            #expect(Self.socketMode(socket)?.isSocket == true)
            let again = try await ServerProgram(
                ["--storage", directory + "/one.sqlite", "--unix-socket", socket], log: directory + "/again.log",
                waitFor: ["listening on unix socket"])
            #expect(try await request(socket, "/v1/health").status == 200)
            again.stop()

            // Something that is not a socket is never removed.
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: socket))
            let refused = try await ChildProcess.run(
                [ServerProgram.path, "--storage", directory + "/one.sqlite", "--unix-socket", socket])
            #expect(refused.status != 0)
            #expect((refused.output + refused.error).contains("exists and is not a socket"), "\(refused.error)")
            #expect(try String(contentsOfFile: socket, encoding: .utf8) == "keep me")
        }
    }
}

/// A blocking client connection to a Unix domain socket, on a thread of its own.
enum UnixSocketConnection {
    /// Sends `request` and reads until `until` holds for what came, the server closes, or 60 s pass.
    static func exchange(_ path: String, _ request: String, until: @escaping @Sendable (Data) -> Bool) async throws
        -> Data
    {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try blockingExchange(path, request, until: until) })
            }
        }
    }

    private static func blockingExchange(_ path: String, _ request: String, until: (Data) -> Bool) throws -> Data {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket: \(errno)") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8.prefix($0.count - 1)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { throw TestFailure("cannot connect to \(path): errno \(errno)") }
        let bytes = Array(request.utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else {
            throw TestFailure("cannot send the request")
        }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !until(received) {
            let count = read(descriptor, &buffer, buffer.count)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return received
    }
}
