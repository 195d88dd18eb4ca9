import Foundation
import NIOCore
import NIOHTTP1

/// Watches a connection's first request, between the HTTP decoder and the WebSocket upgrade
/// handler, where nothing else answers for it.
///
/// Until the first request has been negotiated (a WebSocket upgrade or plain HTTP), Hummingbird
/// has not yet built the rest of the pipeline, and a decoding error or an oversized body would get
/// no answer at all. This handler answers them (through ``RequestTimeouts``), and reports where
/// the first request's head and body end. After the first request it lets everything through
/// untouched: once a connection is upgraded, raw WebSocket bytes flow here, not HTTP parts.
final class FirstRequestWatch: ChannelInboundHandler, RefusalWriter {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        case awaitingHead
        case readingRequest
        /// The request was refused but the connection stays: its body is dropped, and the next
        /// request is the first again.
        case draining
        /// The request was refused and the connection closes: nothing more goes on.
        case refused
        /// The first request has passed: from now on, do not even look.
        case passThrough
    }

    private let timeouts: RequestTimeouts
    private let maximumRequestBytes: Int
    private var state = State.awaitingHead
    private var context: ChannelHandlerContext?
    /// Whether the first request asked for a protocol upgrade (an `Upgrade` header naming one), as
    /// the upgrade handler decides it.
    private(set) var askedForUpgrade = false

    init(timeouts: RequestTimeouts, maximumRequestBytes: Int) {
        self.timeouts = timeouts
        self.maximumRequestBytes = maximumRequestBytes
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Tells the upgrade handler that the first request will not come (or not go on), as if the
    /// client had closed its side: it stops waiting, and Hummingbird lets the connection go
    /// quietly instead of logging a failed negotiation.
    func abandon() {
        context?.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
    }

    func write(_ refusal: HTTPRefusal) {
        guard let context else { return }
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: refusal.status, reasonPhrase: refusal.reason),
            headers: HTTPHeaders(refusal.headers))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(refusal.body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch state {
        case .passThrough:
            context.fireChannelRead(data)
        case .refused:
            break
        case .draining:
            if case .end = unwrapInboundIn(data) {
                state = .awaitingHead
                timeouts.requestEnded()
            }
        case .awaitingHead:
            guard case .head(let head) = unwrapInboundIn(data) else {
                context.fireChannelRead(data)
                return
            }
            let contentLength = head.headers.first(name: "content-length")
            if let refusal = HTTPRefusal.checking(
                contentLength: contentLength, maximumRequestBytes: maximumRequestBytes)
            {
                state = refusal.closesConnection ? .refused : .draining
                timeouts.refuse(refusal, by: self)
                return
            }
            askedForUpgrade = !head.headers[canonicalForm: "upgrade"].isEmpty
            state = .readingRequest
            timeouts.requestHeadReceived(
                body: Self.body(contentLength: contentLength, chunked: head.headers.contains(name: "transfer-encoding"))
            )
            let connection = head.headers[canonicalForm: "connection"].joined(separator: ",")
            if Self.stopsDecoder(
                method: head.method.rawValue, upgrade: head.headers.first(name: "upgrade"), connection: connection)
            {
                timeouts.lastRequestReceived()
            }
            context.fireChannelRead(data)
        case .readingRequest:
            if case .end = unwrapInboundIn(data) {
                // Before passing the end on: it may complete an upgrade, after which what reaches
                // this handler is no longer HTTP parts.
                state = .passThrough
                timeouts.requestEnded()
            }
            context.fireChannelRead(data)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch state {
        case .passThrough:
            context.fireErrorCaught(error)
        case .refused:
            break
        case .awaitingHead, .readingRequest, .draining:
            guard let error = error as? HTTPParserError else {
                context.fireErrorCaught(error)
                return
            }
            if timeouts.handle(error, from: self) {
                state = .refused
            } else {
                context.fireErrorCaught(error)
            }
        }
    }

    /// Whether the decoder stops reading after a request: it does after a `CONNECT`, and after a
    /// request that asks for an upgrade (`Connection: upgrade` and an `Upgrade` header), whether
    /// or not the upgrade happens.
    static func stopsDecoder(method: String, upgrade: String?, connection: String?) -> Bool {
        method == "CONNECT" || (upgrade != nil && connection?.lowercased().contains("upgrade") == true)
    }

    /// The body a request head announces, if any: a `Content-Length` above 0, or a transfer coding
    /// (its length not known in advance).
    static func body(contentLength: String?, chunked: Bool) -> RequestTimeouts.Body? {
        if chunked { return .chunked }
        guard let contentLength else { return nil }
        let length = UInt64(contentLength.trimmingCharacters(in: .whitespaces))
        return length == 0 ? nil : .sized
    }
}
