import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import SyncCore
import SyncTesting
import Testing

@testable import SyncClient

#if canImport(Glibc)
    import Glibc
#endif

/// A request that gets no answer says why in words a person can act on, not in the network libraries'
/// types and codes.
@Suite("SyncClient: why a request got no answer", .timeLimit(.minutes(2)))
struct ConnectionFailureTests {
    /// The `networkFailure` a health check of `url` ends with.
    private func failure(at url: String) async throws -> SyncError {
        let error = try await #require(throws: SyncError.self) {
            _ = try await AccountClient(serverURL: URL(string: url)!).health(timeout: .seconds(60))
        }
        #expect(error.code == .networkFailure, "\(error)")
        return error
    }

    @Test("a port nothing listens on: connection refused, without errno or NIO's wording")
    func refused() async throws {
        let url = "http://127.0.0.1:\(try LoopbackPort.unused())"
        let message = try await failure(at: url).description
        #expect(
            message.contains("could not reach the sync server at \(url): nothing listens there (connection refused)"))
        #expect(!message.contains("errno") && !message.contains("error set"), "\(message)")
    }

    @Test("https:// to a server that speaks plain HTTP: the handshake failed because it does not speak TLS")
    func tlsToPlainHTTP() async throws {
        let message = try await TestServer.with { server in
            try await failure(at: "https://127.0.0.1:\(server.port)").description
        }
        #expect(message.contains("does not speak TLS (a plain http:// server?)"), "\(message)")
        #expect(!message.contains("BoringSSL"), "\(message)")
    }

    @Test("a host name that does not resolve is named")
    func unknownHost() async throws {
        // `.invalid` never resolves (RFC 2606).
        let message = try await failure(at: "http://sync.example.invalid:8080").description
        #expect(message.contains("the host name sync.example.invalid does not resolve"), "\(message)")
        #expect(!message.contains("SocketAddressError"), "\(message)")
    }

    @Test("system calls' and the HTTP client's failures in words")
    func words() {
        #expect(
            ConnectionFailure.describe(IOError(errnoCode: ENOENT, reason: "connect"))
                == "there is no server socket there")
        #expect(
            ConnectionFailure.describe(IOError(errnoCode: ECONNRESET, reason: "read"))
                == "the server closed the connection before it answered")
        #expect(ConnectionFailure.describe(HTTPClientError.connectTimeout) == "no connection within the time allowed")
        #expect(ConnectionFailure.describe(HTTPClientError.deadlineExceeded) == "no answer within the time allowed")
        #expect(
            ConnectionFailure.describe(NIOSSLExtraError.failedToValidateHostname)
                == "the TLS handshake failed: the server's certificate is for another host name")
        #expect(ConnectionFailure.describe(CancellationError()) == "CancellationError()", "others say themselves")
    }
}
