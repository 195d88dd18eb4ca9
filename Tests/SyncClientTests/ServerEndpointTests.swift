import Foundation
import SyncCore
import SyncTesting
import Testing

@testable import SyncClient

#if canImport(Glibc)
    import Glibc
#endif

/// Where a token may go: the checks every request and push socket make before they connect.
@Suite("Server endpoints: Unix sockets only in a private directory, secrets over plain HTTP only to this machine")
struct ServerEndpointTests {
    @Test("http, https and http+unix URLs name their endpoints; a socket path survives the URL form")
    func parsing() throws {
        #expect(
            try ServerEndpoint(URL(string: "http://127.0.0.1:8080")!) == .tcp(host: "127.0.0.1", port: 8080, tls: false)
        )
        #expect(
            try ServerEndpoint(URL(string: "https://sync.example.org")!)
                == .tcp(host: "sync.example.org", port: 443, tls: true))
        let path = "/tmp/a dir/with:odd%chars/sync.sock"
        let url = ServerEndpoint.url(unixSocketPath: path)
        #expect(url.scheme == "http+unix")
        #expect(try ServerEndpoint(url) == .unixSocket(path: path))
        for bad in ["ftp://example.org", "http+unix://relative.sock", "mailto:ada@example.org"] {
            #expect(throws: SyncError.self, "\(bad) is refused") { try ServerEndpoint(URL(string: bad)!) }
        }
    }

    @Test("loopback: 127.0.0.0/8, ::1 and localhost; nothing else")
    func loopback() {
        for host in ["127.0.0.1", "127.9.8.7", "::1", "[::1]", "localhost", "LOCALHOST"] {
            #expect(ServerEndpoint.isLoopback(host), "\(host)")
        }
        for host in ["10.0.0.1", "192.0.2.1", "::2", "fd00::1", "example.org", "127.0.0.1.example.org", ""] {
            #expect(!ServerEndpoint.isLoopback(host), "\(host)")
        }
    }

    @Test("a token or password never goes over plain http to another machine unless allowed; https and loopback pass")
    func plainHTTPRefusal() throws {
        let remote = try ServerEndpoint(URL(string: "http://sync.invalid:8080")!)
        let strict = TransportSecurity()
        #expect(throws: SyncError.self) { try remote.verify(sendingSecrets: true, strict) }
        do {
            try remote.verify(sendingSecrets: true, strict)
        } catch let error as SyncError {
            #expect(error.message.contains("refusing to send a password or token over plain http://"), "\(error)")
            #expect(error.message.contains("https://"), "it names the fix: \(error)")
        }
        // Nothing secret: a health check may go.
        try remote.verify(sendingSecrets: false, strict)
        try remote.verify(sendingSecrets: true, TransportSecurity(allowsInsecureHTTP: true))
        try ServerEndpoint(URL(string: "https://sync.invalid")!).verify(sendingSecrets: true, strict)
        try ServerEndpoint(URL(string: "http://127.0.0.1:9")!).verify(sendingSecrets: true, strict)
    }

    @Test("a request with a token to a plain-http address elsewhere fails before anything is sent")
    func requestsAreRefusedBeforeConnecting() async throws {
        // `.invalid` never resolves: had the client tried to connect, the error would be a lookup failure.
        let remote = URL(string: "http://sync.invalid:8080")!
        await #expect {
            _ = try await AccountClient(serverURL: remote).account(token: "secret")
        } throws: { error in
            (error as? SyncError)?.message.contains("refusing to send a password or token") == true
        }
        await #expect {
            _ = try await AccountClient(serverURL: remote).signIn(username: "ada", password: "correct horse")
        } throws: { error in
            (error as? SyncError)?.message.contains("refusing to send a password or token") == true
        }
        await #expect {
            try await PushSocket.listen(
                serverURL: URL(string: "http://sync.invalid:8080")!, token: "secret", deviceID: nil
            ) {
                _ in
            }
        } throws: { error in
            (error as? SyncError)?.message.contains("refusing to send a password or token") == true
        }
    }

    @Test("a socket's directory must be this user's own, private, and not a symbolic link")
    func socketDirectories() throws {
        let base = TemporaryFiles.path("endpoint")
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let directory = base + "/server"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let socket = directory + "/sync.sock"

        chmod(directory, 0o700)
        #expect(ServerEndpoint.problem(withSocketDirectoryOf: socket) == nil)
        for mode: mode_t in [0o755, 0o770, 0o707, 0o711] {
            chmod(directory, mode)
            let problem = ServerEndpoint.problem(withSocketDirectoryOf: socket)
            #expect(
                problem?.contains("mode \(String(mode, radix: 8))") == true,
                "\(String(mode, radix: 8)): \(problem ?? "none")")
            #expect(problem?.contains("chmod 700 \(directory)") == true)
        }
        chmod(directory, 0o700)
        let link = base + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory)
        #expect(ServerEndpoint.problem(withSocketDirectoryOf: link + "/sync.sock")?.contains("symbolic link") == true)
        #expect(
            ServerEndpoint.problem(withSocketDirectoryOf: base + "/missing/sync.sock")?.contains("cannot be read")
                == true)
        if geteuid() == 0 {
            chown(directory, 65534, 65534)
            #expect(ServerEndpoint.problem(withSocketDirectoryOf: socket)?.contains("belongs to user ID 65534") == true)
        }

        // Every request checks it: a socket in a directory others can enter is never connected to.
        chmod(directory, 0o777)
        let connection = ServerConnection(serverURL: ServerEndpoint.url(unixSocketPath: socket))
        #expect(throws: SyncError.self) {
            try ServerEndpoint(connection.serverURL).verify(sendingSecrets: false, TransportSecurity())
        }
    }
}
