import AsyncHTTPClient
import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import SyncCore
import SyncTesting
import Synchronization
import Testing

/// `sync-server --tls-certificate FILE --tls-key FILE`: the built program serves HTTPS and wss on
/// its TCP listener with a certificate made for the test by a CA of the test's own.
@Suite("sync-server with TLS")
struct TLSListenerTests {
    /// A CA, a certificate it signed for 127.0.0.1 and localhost, its key, and a key of no certificate.
    struct Files {
        var directory: String
        var ca: String { directory + "/ca.pem" }
        var certificate: String { directory + "/server.pem" }
        var key: String { directory + "/server.key" }
        var otherKey: String { directory + "/other.key" }
    }

    private func withFiles(_ body: (Files) async throws -> Void) async throws {
        let directory = TemporaryFiles.path("tls")
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = Files(directory: directory)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
            toFile: directory + "/san.cnf", atomically: true, encoding: .utf8)
        for command in [
            ["req", "-x509"] + ec + [
                "-keyout", directory + "/ca.key", "-out", files.ca, "-days", "2", "-subj", "/CN=Test CA",
            ],
            ["req"] + ec + ["-keyout", files.key, "-out", directory + "/server.csr", "-subj", "/CN=localhost"],
            [
                "x509", "-req", "-in", directory + "/server.csr", "-CA", files.ca, "-CAkey", directory + "/ca.key",
                "-CAcreateserial", "-out", files.certificate, "-days", "2", "-extfile", directory + "/san.cnf",
            ],
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", files.otherKey],
        ] {
            let outcome = try await ChildProcess.run(["/usr/bin/openssl"] + command)
            try #require(outcome.status == 0, "openssl \(command): \(outcome.error)")
        }
        try await body(files)
    }

    /// A client configuration that trusts only the test's CA.
    private func trusting(_ files: Files) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(files.ca))
        return tls
    }

    private func get(_ url: String, tls: TLSConfiguration?) async throws -> Int {
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
            _ = try await response.body.collect(upTo: 1 << 20)
            try await client.shutdown()
            return Int(response.status.code)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    @Test("HTTPS and wss work for a client trusting the CA; plain HTTP and a client not trusting it get nothing")
    func servesTLS() async throws {
        try await withFiles { files in
            let server = try await ServerProgram(
                [
                    "--storage", files.directory + "/s.sqlite", "--port", "0", "--tls-certificate", files.certificate,
                    "--tls-key", files.key,
                ], log: files.directory + "/log", waitFor: ["listening on https://"])
            defer { server.stop() }
            let port = try #require(server.port("https"), "\(server.printed)")
            let tls = try trusting(files)
            #expect(try await get("https://localhost:\(port)/v1/health", tls: tls) == 200)

            // An account over HTTPS, then its push socket over wss.
            var configuration = HTTPClient.Configuration()
            configuration.tlsConfiguration = tls
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let token: String
            do {
                let credentials = try JSONEncoder().encode(
                    AccountCredentials(username: "ada", password: "correct horse battery"))
                for path in ["/v1/accounts", "/v1/sessions"] {
                    var request = HTTPClientRequest(url: "https://localhost:\(port)\(path)")
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.body = .bytes(ByteBuffer(bytes: credentials))
                    let response = try await client.execute(request, timeout: .seconds(60))
                    _ = try await response.body.collect(upTo: 1 << 20)
                    #expect(response.status.code < 300, "\(path): \(response.status)")
                }
                var request = HTTPClientRequest(url: "https://localhost:\(port)/v1/sessions")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: credentials))
                let response = try await client.execute(request, timeout: .seconds(60))
                token = try JSONDecoder().decode(
                    SessionInfo.self, from: Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
                ).token
                try await client.shutdown()
            } catch {
                try? await client.shutdown()
                throw error
            }
            var headers = HTTPFields()
            headers[.authorization] = "Bearer \(token)"
            let logger = Logger(label: "tls-test")
            let first = Mutex<String?>(nil)
            try await WebSocketClient.connect(
                url: "wss://localhost:\(port)/v1/push?device=laptop", configuration: .init(additionalHeaders: headers),
                tlsConfiguration: tls, logger: logger
            ) { inbound, _, _ in
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    if case .text(let text) = message {
                        first.withLock { $0 = text }
                        return
                    }
                }
            }
            let message = try #require(first.withLock { $0 }, "the server sent nothing over wss")
            #expect(message.contains("connected"), "\(message)")

            // Plain HTTP to the TLS port: no HTTP answer.
            let plain = try? await RawHTTP.exchange(port: port, "GET", "/v1/health")
            #expect(plain == nil, "answered over plain HTTP: \(String(describing: plain))")
            // A client that does not trust the CA refuses the server.
            await #expect(throws: (any Error).self) {
                _ = try await get("https://localhost:\(port)/v1/health", tls: .makeClientConfiguration())
            }
        }
    }

    @Test("a missing certificate, a key of another certificate, a file that is no PEM: refused at start, saying which")
    func badFiles() async throws {
        try await withFiles { files in
            let storage = files.directory + "/s.sqlite"
            try "not a certificate\n".write(toFile: files.directory + "/junk.pem", atomically: true, encoding: .utf8)
            for (certificate, key, message) in [
                (files.directory + "/missing.pem", files.key, "does not exist"),
                (files.certificate, files.otherKey, "is not the key of the certificate"),
                (files.directory + "/junk.pem", files.key, "holds no PEM certificate"),
                (files.certificate, files.directory + "/junk.pem", "holds no unencrypted PEM private key"),
            ] {
                let outcome = try await ChildProcess.run([
                    ServerProgram.path, "--storage", storage, "--port", "0", "--tls-certificate", certificate,
                    "--tls-key", key,
                ])
                #expect(outcome.status != 0)
                #expect((outcome.output + outcome.error).contains(message), "\(outcome.output + outcome.error)")
            }
        }
    }
}
