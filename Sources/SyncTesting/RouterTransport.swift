import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import SyncClient
import SyncServer
import Synchronization

/// Hands requests straight to a server's router, in this process: what a request goes through
/// between the HTTP parser and the socket (connection limits, timeouts, push upgrades) is left out,
/// everything the routes and their middleware decide is the same. Hummingbird's own testing
/// framework (`HummingbirdTesting`'s `.router`) runs tests this way.
///
/// Each request arrives on a connection of its own from 127.0.0.1, as the test clients' requests
/// over loopback count for the per-address limits. A middleware that closes the connection (the
/// ``FaultInjector``'s dropped requests and responses) makes the exchange fail with no answer, as
/// the client sees it on a socket.
struct RouterTransport: InProcessTransport {
    let responder: RouterResponder<SyncRequestContext>
    let logger: Logger

    /// Answers on a task of its own, as a server's connection handler would: a client that stops
    /// waiting (its task cancelled) gets `CancellationError` at once, and the server finishes the
    /// request or not on its own, as it does when a client hangs up.
    func exchange(_ method: HTTPMethod, _ path: String, headers: [(String, String)], body: [UInt8]?) async throws
        -> HTTPAnswer
    {
        let waiter = Waiter()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard waiter.wait(continuation) else { return }
                Task {
                    do {
                        waiter.resume(with: .success(try await answer(method, path, headers: headers, body: body)))
                    } catch {
                        waiter.resume(with: .failure(error))
                    }
                }
            }
        } onCancel: {
            waiter.resume(with: .failure(CancellationError()))
        }
    }

    private func answer(_ method: HTTPMethod, _ path: String, headers: [(String, String)], body: [UInt8]?)
        async throws -> HTTPAnswer
    {
        guard let method = HTTPRequest.Method(method.rawValue) else {
            throw RouterTransportError.unsupported("the method \(method.rawValue)")
        }
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let name = HTTPField.Name(name) else { throw RouterTransportError.unsupported("the header \(name)") }
            fields.append(HTTPField(name: name, value: value))
        }
        if let body { fields[.contentLength] = String(body.count) }
        let request = Request(
            head: HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1", path: path, headerFields: fields),
            body: RequestBody(buffer: ByteBuffer(bytes: body ?? [])))
        let channel = NIOAsyncTestingChannel()
        let peer = try SocketAddress(ipAddress: "127.0.0.1", port: 50_000)
        channel.remoteAddress = peer
        try await channel.connect(to: peer).get()
        // As Hummingbird's server does: each request's logger carries its ID.
        var logger = logger
        logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
        let context = SyncRequestContext(source: .init(channel: channel, logger: logger))
        var response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch {
            // What Hummingbird's server answers to an error no middleware turned into a response.
            response = Response(status: .internalServerError)
        }
        guard channel.isActive else { throw RouterTransportError.connectionClosed }
        let collected = CollectedBody()
        try await response.body.write(BodyCollector(into: collected))
        response.headers[.server] = "sync-server"
        return HTTPAnswer(
            status: response.status.code, headers: response.headers.map { ($0.name.rawName, $0.value) },
            body: collected.bytes.withLock { Data($0.readableBytesView) })
    }
}

/// Why an exchange through a ``RouterTransport`` gave no answer.
enum RouterTransportError: Error, CustomStringConvertible {
    /// The server closed the connection without answering.
    case connectionClosed
    /// A method or header name HTTP does not allow.
    case unsupported(String)

    var description: String {
        switch self {
        case .connectionClosed: "the server closed the connection without answering"
        case .unsupported(let what): "\(what) cannot be sent over HTTP"
        }
    }
}

/// The client's side of one exchange: resumed once, by the answer or by the client's cancellation,
/// whichever comes first.
private final class Waiter: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<HTTPAnswer, any Error>)
        case done
    }

    private let state = Mutex(State.idle)

    /// Keeps `continuation` until ``resume(with:)``; false (and resumed with `CancellationError`)
    /// when the client was cancelled before it began to wait.
    func wait(_ continuation: CheckedContinuation<HTTPAnswer, any Error>) -> Bool {
        let cancelled = state.withLock { state in
            guard case .idle = state else { return true }
            state = .waiting(continuation)
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    func resume(with result: Result<HTTPAnswer, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<HTTPAnswer, any Error>? in
            defer { state = .done }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        continuation?.resume(with: result)
    }
}

/// A response body, as it is written.
private final class CollectedBody: Sendable {
    let bytes = Mutex(ByteBuffer())
}

/// Writes a response body into a ``CollectedBody``.
private struct BodyCollector: ResponseBodyWriter {
    let body: CollectedBody

    init(into body: CollectedBody) { self.body = body }

    mutating func write(_ buffer: ByteBuffer) async throws {
        body.bytes.withLock { $0.writeImmutableBuffer(buffer) }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
