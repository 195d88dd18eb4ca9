import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// A loopback HTTP server that passes every request on to another server and the answer back, and keeps both
/// bodies (as files) of the requests that arrive while a phase is named: how the in-run reference of
/// `sync-bench contacts` learns which bytes a `contacts sync` moves, request by request. It stands only between
/// the reference's own replay and the server, never between the measured commands and it: a hop of its own
/// would add to the figures it is a reference for.
final class RecordingRelay: Sendable {
    /// One request and its answer, recorded in a phase.
    struct Exchange: Sendable {
        var phase: String
        /// The order it arrived in, over every phase.
        var index: Int
        /// The request's path, without its query.
        var path: String
        var request: URL
        var response: URL
        var sent: Int
        var received: Int
    }

    private struct State {
        var phase: String?
        var arrived = 0
        var exchanges: [Exchange] = []
    }

    /// `http://127.0.0.1:PORT`, where the relay listens.
    let baseURL: String
    private let target: String
    private let directory: URL
    private let state = Mutex(State())
    private let running = Mutex<(group: ServiceGroup, task: Task<Void, any Error>)?>(nil)

    /// The largest body either way: a page of 400 contacts is far below it.
    static let maximumBody = 256 << 20

    /// Hop-by-hop headers, and the length that the relay's own HTTP stack writes again.
    private static let notPassedOn: Set<String> = [
        "connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade", "te", "trailer",
    ]

    private init(baseURL: String, target: String, directory: URL) {
        self.baseURL = baseURL
        self.target = target
        self.directory = directory
    }

    /// A relay to `target` (`http://host:port`) on a free loopback port, keeping bodies in `directory`.
    static func start(forwardingTo target: String, savingIn directory: URL) async throws -> RecordingRelay {
        let (ports, announce) = AsyncStream.makeStream(of: Int.self)
        // The responder is made before the server listens, the relay (which says where) only after: the
        // responder finds the relay in a box, and answers 503 to anything that comes before it is there.
        let box = Mutex<RecordingRelay?>(nil)
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            guard let relay = box.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            return try await relay.forward(request)
        }
        var logger = Logger(label: "sync-bench.relay")
        logger.logLevel = .warning
        let app = Application(
            responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                announce.yield(channel.localAddress?.port ?? 0)
                announce.finish()
            }, logger: logger)
        // No signals: the relay stops when told (``stop()``), and a Control-C stops the benchmark as before.
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            defer { announce.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            try await task.value
            throw BenchError(description: "the recording relay stopped before it listened on a port")
        }
        let relay = RecordingRelay(baseURL: "http://127.0.0.1:\(port)", target: target, directory: directory)
        relay.running.withLock { $0 = (group, task) }
        box.withLock { $0 = relay }
        return relay
    }

    /// Stops listening, gracefully, and waits for the server to end.
    func stop() async {
        guard let (group, task) = running.withLock({ $0 }) else { return }
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    /// Records the requests that arrive from now on under `phase`; none when nil.
    func record(_ phase: String?) {
        state.withLock { $0.phase = phase }
    }

    /// The exchanges of `phase`, in the order their requests arrived.
    func exchanges(of phase: String) -> [Exchange] {
        state.withLock { $0.exchanges }.filter { $0.phase == phase }.sorted { $0.index < $1.index }
    }

    private func forward(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: Self.maximumBody)
        let arrival: (phase: String, index: Int)? = state.withLock { state in
            guard let phase = state.phase else { return nil }
            defer { state.arrived += 1 }
            return (phase, state.arrived)
        }
        var outgoing = HTTPClientRequest(url: target + request.uri.string)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headers where !Self.notPassedOn.contains(field.name.canonicalName) {
            outgoing.headers.add(name: field.name.rawName, value: field.value)
        }
        outgoing.body = .bytes(body)
        let answer = try await HTTPClient.shared.execute(outgoing, timeout: .seconds(600))
        let answerBody = try await answer.body.collect(upTo: Self.maximumBody)
        if let arrival {
            try keep(request: body, response: answerBody, path: request.uri.path, arrival)
        }
        var headers = HTTPFields()
        for (name, value) in answer.headers where !Self.notPassedOn.contains(name.lowercased()) {
            if let name = HTTPField.Name(name) { headers.append(HTTPField(name: name, value: value)) }
        }
        return Response(
            status: HTTPResponse.Status(code: Int(answer.status.code)), headers: headers,
            body: ResponseBody(byteBuffer: answerBody))
    }

    /// Writes both bodies to files (a large run's would not fit in memory) and notes the exchange.
    private func keep(
        request: ByteBuffer, response: ByteBuffer, path: String, _ arrival: (phase: String, index: Int)
    ) throws {
        let name = "\(arrival.phase).\(arrival.index)"
        let exchange = Exchange(
            phase: arrival.phase, index: arrival.index, path: path,
            request: directory.appendingPathComponent(name + ".request"),
            response: directory.appendingPathComponent(name + ".response"), sent: request.readableBytes,
            received: response.readableBytes)
        try Data(request.readableBytesView).write(to: exchange.request)
        try Data(response.readableBytesView).write(to: exchange.response)
        state.withLock { $0.exchanges.append(exchange) }
    }
}
