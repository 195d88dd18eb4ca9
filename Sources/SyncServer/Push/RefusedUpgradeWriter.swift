import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1

/// Puts the router's answer on the wire when it refuses a WebSocket upgrade.
///
/// hummingbird-websocket answers every refused upgrade with an empty `400` of its own. The router
/// knew better (a `401` with the error body, a `429` with `Retry-After`): this handler, installed
/// on the connection just before the refusal, replaces that `400` with the router's answer. The
/// connection closes after it, as it would have.
final class RefusedUpgradeWriter: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let status: HTTPResponseStatus
    private let headers: HTTPHeaders
    private let body: ByteBuffer

    private init(status: HTTPResponseStatus, headers: HTTPHeaders, body: ByteBuffer) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Installs a writer of `response` on `channel`, whose upgrade is about to be refused.
    static func install(_ response: Response, on channel: any Channel) async throws {
        var headers = HTTPHeaders(response.headers.map { ($0.name.rawName, $0.value) })
        let body = try await collect(response.body)
        headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
        headers.replaceOrAdd(name: "Connection", value: "close")
        let writer = RefusedUpgradeWriter(
            status: HTTPResponseStatus(statusCode: response.status.code, reasonPhrase: response.status.reasonPhrase),
            headers: headers, body: body)
        try await channel.pipeline.addHandler(writer).get()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            let replacement = HTTPResponseHead(version: head.version, status: status, headers: headers)
            context.write(wrapOutboundOut(.head(replacement)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: promise)
        case .body:
            // The library's own body, if it ever sends one: the router's replaces it.
            promise?.succeed()
        case .end:
            context.write(data, promise: promise)
        }
    }

    /// The bytes of an error answer (small JSON; anything past 64 KiB is dropped).
    private static func collect(_ body: ResponseBody) async throws -> ByteBuffer {
        let sink = Sink()
        try await body.write(Collector(sink: sink))
        return sink.buffer
    }

    private final class Sink {
        var buffer = ByteBuffer()
    }

    private struct Collector: ResponseBodyWriter {
        let sink: Sink

        mutating func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            if sink.buffer.readableBytes + buffer.readableBytes <= 64 * 1024 {
                sink.buffer.writeBuffer(&buffer)
            }
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
