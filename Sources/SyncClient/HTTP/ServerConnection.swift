import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import SyncCore
import Synchronization

/// The project's one HTTP client for a sync server: the engine, ``Database``, ``AccountClient``,
/// the test client and the benchmarks all send through it, so that they cannot drift apart.
///
/// ``exchange(_:_:body:headers:timeout:)`` returns whatever the server answered;
/// ``send(_:_:body:timeout:)`` returns a successful answer's body and turns everything else into a
/// ``SyncError``: the server's own, or `networkFailure` when no answer came.
package struct ServerConnection: Sendable {
    /// The server's base URL, such as `http://127.0.0.1:8080`.
    package var serverURL: URL
    /// The bearer token to send, if any.
    package var token: String?
    /// Names this device to the server, so that its own changes are not pushed back to it.
    package var deviceID: String?
    /// The largest answer body read; a longer one fails the request.
    package var maximumAnswerSize = 256 * 1024 * 1024

    package init(serverURL: URL, token: String? = nil, deviceID: String? = nil) {
        self.serverURL = serverURL
        self.token = token
        self.deviceID = deviceID
    }

    /// One client for the process, like `HTTPClient.shared`, but failing at once when the server
    /// refuses connections: the engine and its scheduler retry with their own backoff, and an app
    /// should show "offline" now, not after the request's whole deadline.
    private static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(5)
        // The connect timeout also bounds the wait for a pooled connection: with AsyncHTTPClient's
        // default of 8 per host, a ninth concurrent request to a busy server (password hashing, a
        // loaded machine) failed with getConnectionFromPoolTimeout. The server allows 64 per address.
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 32
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// The server's base URL as text, without a trailing slash.
    package var base: String {
        var url = serverURL.absoluteString
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// Sends a request and returns the server's answer, whatever its status. Throws only when no
    /// answer came (`networkFailure`) or the task was cancelled (`operationCancelled`).
    package func exchange(
        _ method: HTTPMethod, _ path: String, body: [UInt8]? = nil, headers: [(String, String)] = [],
        timeout: TimeAmount = .seconds(60)
    ) async throws -> HTTPAnswer {
        let (endpoint, request) = try prepared(method, path, body: body, headers: headers)
        if let transport = InProcessTransports.transport(for: base) {
            return try await exchange(
                method, path, headers: request.fields, body: body, in: transport, endpoint: endpoint)
        }
        return try await Self.reaching(endpoint) {
            let response = try await Self.http.execute(try request.client(), timeout: timeout)
            let buffer = try await response.body.collect(upTo: maximumAnswerSize)
            return HTTPAnswer(
                status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
                body: Data(buffer.readableBytesView))
        }
    }

    /// Sends a `GET` and hands a successful answer's body to `write` as it arrives, never holding it
    /// whole; returns the answer's status and headers. Any other answer throws the server's error.
    package func download(
        _ path: String, headers: [(String, String)] = [], timeout: TimeAmount = .seconds(600),
        into write: (ByteBuffer) async throws -> Void
    ) async throws -> HTTPAnswer {
        let (endpoint, request) = try prepared(.GET, path, body: nil, headers: headers)
        if let transport = InProcessTransports.transport(for: base) {
            var answer = try await exchange(
                .GET, path, headers: request.fields, body: nil, in: transport, endpoint: endpoint)
            if let failure = answer.failure { throw failure }
            try await write(ByteBuffer(bytes: answer.body))
            answer.body = Data()
            return answer
        }
        let response = try await Self.reaching(endpoint) {
            try await Self.http.execute(try request.client(), timeout: timeout)
        }
        let answer = HTTPAnswer(
            status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) }, body: Data())
        guard (200..<300).contains(answer.status) else {
            var failed = answer
            failed.body = Data(try await response.body.collect(upTo: 1024 * 1024).readableBytesView)
            throw failed.failure ?? SyncError(.internalError, "the server answered HTTP \(answer.status)")
        }
        var body = response.body.makeAsyncIterator()
        while true {
            let next: ByteBuffer?
            do {
                next = try await body.next()
            } catch is CancellationError {
                throw SyncError(.operationCancelled, "the download was cancelled")
            } catch {
                throw SyncError(
                    .networkFailure,
                    "the download from \(endpoint) broke off: \(ConnectionFailure.describe(error)); download it again")
            }
            guard let next else { return answer }
            try await write(next)
        }
    }

    /// A request's headers, checked against the transport's rules, and how to send it.
    private struct Prepared {
        var url: String
        var method: HTTPMethod
        var fields: [(String, String)]
        var body: [UInt8]?
        var tls: TLSConfiguration?

        func client() throws -> HTTPClientRequest {
            var request = HTTPClientRequest(url: url)
            request.method = method
            request.tlsConfiguration = tls
            for (name, value) in fields { request.headers.add(name: name, value: value) }
            if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
            return request
        }
    }

    private func prepared(_ method: HTTPMethod, _ path: String, body: [UInt8]?, headers: [(String, String)]) throws
        -> (ServerEndpoint, Prepared)
    {
        let endpoint = try ServerEndpoint(serverURL)
        let security = TransportSecurity.current
        // A body without a token is a sign-up or sign-in: it carries a password.
        try endpoint.verify(sendingSecrets: token != nil || body != nil, security)
        var fields: [(String, String)] = []
        if let token { fields.append(("Authorization", "Bearer \(token)")) }
        if let deviceID { fields.append(("X-Device-ID", deviceID)) }
        fields += headers
        if body != nil, !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
            fields.append(("Content-Type", "application/json"))
        }
        var tls: TLSConfiguration?
        if case .tcp(_, _, true) = endpoint, security.caFile != nil {
            tls = try Self.tlsConfiguration(security)
        }
        return (endpoint, Prepared(url: base + path, method: method, fields: fields, body: body, tls: tls))
    }

    /// Runs one exchange with the server at `endpoint`, saying its failures as the engine expects them:
    /// a cancelled request as `operationCancelled`, anything else that kept the answer away as
    /// `networkFailure` (which the engine retries), with what it means (``ConnectionFailure``).
    private static func reaching<T>(
        _ endpoint: ServerEndpoint, _ exchange: () async throws -> T
    ) async throws -> T {
        do {
            return try await exchange()
        } catch is CancellationError {
            throw SyncError(.operationCancelled, "the request was cancelled")
        } catch {
            throw SyncError(
                .networkFailure,
                "could not reach the sync server at \(endpoint): \(ConnectionFailure.describe(error))")
        }
    }

    /// ``exchange(_:_:body:headers:timeout:)`` with a server in this process (tests only): the same
    /// checks before and the same errors after, without a socket.
    private func exchange(
        _ method: HTTPMethod, _ path: String, headers: [(String, String)], body: [UInt8]?,
        in transport: any InProcessTransport, endpoint: ServerEndpoint
    ) async throws -> HTTPAnswer {
        try await Self.reaching(endpoint) {
            try Task.checkCancellation()
            let answer = try await transport.exchange(method, path, headers: headers, body: body)
            guard answer.body.count <= maximumAnswerSize else {
                throw SyncError(.internalError, "the answer is larger than \(maximumAnswerSize) bytes")
            }
            return answer
        }
    }

    /// The TLS settings for servers vouched for by ``TransportSecurity/caFile`` (the system's roots
    /// otherwise); throws, naming the file, when it holds no certificate.
    static func tlsConfiguration(_ security: TransportSecurity) throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caFile = security.caFile {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(caFile)
            } catch {
                throw SyncError(
                    .invalidArguments,
                    "the CA file \(caFile) does not read as PEM certificates (\(error)); pass the certificate of the authority that signed the server's"
                )
            }
            guard !certificates.isEmpty else {
                throw SyncError(.invalidArguments, "the CA file \(caFile) holds no certificate")
            }
            configuration.trustRoots = .certificates(certificates)
        }
        return configuration
    }

    /// A TLS context for `security`, made once per setting: loading roots is slow.
    static func sslContext(_ security: TransportSecurity) throws -> NIOSSLContext {
        if let cached = contexts.withLock({ $0[security] }) { return cached }
        let context = try NIOSSLContext(configuration: try tlsConfiguration(security))
        contexts.withLock { $0[security] = context }
        return context
    }

    private static let contexts = Mutex<[TransportSecurity: NIOSSLContext]>([:])

    /// Sends a request and returns the body of a successful answer, or throws the server's error.
    package func send(
        _ method: HTTPMethod, _ path: String, body: [UInt8]?, headers: [(String, String)] = [],
        timeout: TimeAmount = .seconds(60)
    ) async throws -> Data {
        let answer = try await exchange(method, path, body: body, headers: headers, timeout: timeout)
        if let error = answer.failure { throw error }
        return answer.body
    }

    /// Decodes a server's answer with the strict reader; a body that does not read is `internalError`.
    package static func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        do {
            return try JSONReader.decode(type, from: data)
        } catch {
            throw SyncError(.internalError, "the server's answer could not be read: \(error)")
        }
    }
}
