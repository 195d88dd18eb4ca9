import Foundation
import NIOCore
import NIOHTTP1
import SyncCore

/// An answer the HTTP layer gives by itself, before any route sees the request: a malformed
/// request, a head too large, a body declared too large. It has CloudKit's error body like every
/// other error of the server, and says `Connection: close` when the connection closes after it.
struct HTTPRefusal: Equatable {
    var status: Int
    var reason: String
    var error: SyncError
    /// Whether the connection closes after the answer. When it does not, the refused request's
    /// body is read and dropped, and the connection serves the next request.
    var closesConnection = true

    /// The answer's headers.
    var headers: [(String, String)] {
        var headers = [
            ("Content-Type", "application/json; charset=utf-8"), ("Content-Length", String(body.readableBytes)),
        ]
        if closesConnection { headers.append(("Connection", "close")) }
        return headers
    }

    /// The answer's body: the error as JSON.
    var body: ByteBuffer {
        ByteBuffer(bytes: (try? JSONEncoder().encode(error)) ?? Data())
    }

    /// How much of a refused body is read and dropped to keep the connection, as a multiple of the
    /// request limit. Clients that send their whole body before they read the answer (such as
    /// AsyncHTTPClient) then see the `413`, where a closed connection would fail their upload; a
    /// larger declared body closes the connection instead.
    static let drainedBodyFactor: UInt64 = 8

    /// The answer to a request the decoder could not parse.
    /// - Parameter maximumHeaderBytes: the head limit, to name it; nil where it is not known.
    static func answering(_ error: HTTPParserError, maximumHeaderBytes: Int?) -> HTTPRefusal {
        if error == .headerOverflow {
            return HTTPRefusal(
                status: 431, reason: "Request Header Fields Too Large",
                error: SyncError(
                    .limitExceeded,
                    "the request line and headers (or trailers) are \(maximumHeaderBytes.map { "larger than \($0) bytes" } ?? "too large"), or too many; send fewer or shorter headers"
                ))
        }
        let problem: String
        switch error {
        case .unexpectedContentLength:
            problem = "Content-Length must not be sent twice, nor together with Transfer-Encoding"
        case .invalidContentLength: problem = "its Content-Length is not a number of bytes"
        case .invalidMethod: problem = "its request line does not start with an HTTP method"
        case .invalidVersion: problem = "its request line does not end with HTTP/1.1"
        case .invalidURL, .invalidPath, .invalidQueryString, .invalidFragment, .invalidHost, .invalidPort:
            problem = "its request target is not a valid path"
        case .invalidHeaderToken: problem = "a header name or value has a character HTTP does not allow"
        case .invalidChunkSize: problem = "its chunked body has an invalid chunk size"
        case .unknown:
            // What the decoder does not name is mostly framing: Content-Length together with
            // Transfer-Encoding, a transfer coding other than chunked, a line without its CR.
            problem =
                "its framing is invalid (Content-Length together with Transfer-Encoding, a Transfer-Encoding other than chunked, or a line not ending in CRLF)"
        default: problem = "it is malformed (\(error))"
        }
        return HTTPRefusal(
            status: 400, reason: "Bad Request",
            error: SyncError(
                .invalidArguments,
                "the request is not valid HTTP/1.1: \(problem); send requests as described in openapi.yaml"))
    }

    /// The answer to a first request asking for an upgrade the server does not do (any but a
    /// WebSocket on `GET /v1/push`).
    static let upgradeNotDone = HTTPRefusal(
        status: 400, reason: "Bad Request",
        error: SyncError(
            .invalidArguments,
            "only GET /v1/push upgrades, to a WebSocket (Connection: Upgrade, Upgrade: websocket, Sec-WebSocket-Key, Sec-WebSocket-Version: 13); send other requests without an Upgrade header"
        ))

    /// The answer to a request head that must not be served, or nil if it may go on. A declared
    /// body over the limit is refused before a byte of it is read.
    /// - Parameter contentLength: the `Content-Length` header's value, if there is one (the decoder
    ///   has refused a second one).
    static func checking(contentLength: String?, maximumRequestBytes: Int) -> HTTPRefusal? {
        guard let contentLength else { return nil }
        let text = contentLength.trimmingCharacters(in: .whitespaces)
        // The decoder accepted it, so it is digits; it may still be more than 64 bits can hold.
        guard let length = UInt64(text) else {
            if !text.isEmpty && text.allSatisfy(\.isASCIIDigitCharacter) {
                return tooLarge(declared: text, maximumRequestBytes: maximumRequestBytes)
            }
            return answering(.invalidContentLength, maximumHeaderBytes: nil)
        }
        let limit = UInt64(max(0, maximumRequestBytes))
        guard length <= limit else {
            var refusal = tooLarge(declared: String(length), maximumRequestBytes: maximumRequestBytes)
            refusal.closesConnection = length / drainedBodyFactor > limit
            return refusal
        }
        return nil
    }

    private static func tooLarge(declared: String, maximumRequestBytes: Int) -> HTTPRefusal {
        HTTPRefusal(
            status: 413, reason: "Content Too Large",
            error: SyncError(
                .limitExceeded,
                "the request body of \(declared) bytes is larger than this server's limit of \(maximumRequestBytes) bytes (GET /v1/limits); split it into smaller requests"
            ))
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
}

/// A handler that can put an ``HTTPRefusal`` on the wire through the connection's HTTP encoder
/// (which must see every response, to pair it with its request), when ``RequestTimeouts`` says
/// its turn has come.
protocol RefusalWriter: AnyObject {
    func write(_ refusal: HTTPRefusal)
}
