import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Watches the requests and responses of an HTTP connection (one that did not become a push
/// WebSocket), as one of Hummingbird's additional channel handlers: it tells
/// ``RequestTimeouts`` where each request's head and body end and each response ends, refuses a
/// body declared larger than the limit before a byte of it is read, and answers a request the
/// decoder could not parse.
///
/// The connection's first request is ``FirstRequestWatch``'s: this handler is installed while
/// that request is negotiated, and reports only its response.
final class RequestWatch: ChannelDuplexHandler, RemovableChannelHandler, RefusalWriter {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum State {
        /// The connection's first request, ``FirstRequestWatch``'s.
        case firstRequest
        case watching
        /// A refused request whose body is dropped; the connection stays.
        case draining
        /// A refused request after which the connection closes.
        case refused
    }

    private let maximumRequestBytes: Int
    private var timeouts: RequestTimeouts?
    private var context: ChannelHandlerContext?
    private var state = State.firstRequest

    init(maximumRequestBytes: Int) {
        self.maximumRequestBytes = maximumRequestBytes
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        timeouts = try? context.pipeline.syncOperations.handler(type: RequestTimeouts.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        timeouts = nil
    }

    func write(_ refusal: HTTPRefusal) {
        guard let context else { return }
        var fields = HTTPFields()
        for (name, value) in refusal.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        let head = HTTPResponse(
            status: HTTPResponse.Status(code: refusal.status, reasonPhrase: refusal.reason), headerFields: fields)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(refusal.body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch (state, part) {
        case (.refused, _):
            return
        case (.draining, .end):
            state = .watching
            timeouts?.requestEnded()
            return
        case (.draining, _):
            return
        case (.firstRequest, .end):
            state = .watching
        case (.firstRequest, _):
            break
        case (.watching, .head(let head)):
            if let timeouts {
                let contentLength = head.headerFields[.contentLength]
                if let refusal = HTTPRefusal.checking(
                    contentLength: contentLength, maximumRequestBytes: maximumRequestBytes)
                {
                    state = refusal.closesConnection ? .refused : .draining
                    timeouts.refuse(refusal, by: self)
                    return
                }
                timeouts.requestHeadReceived(
                    body: FirstRequestWatch.body(
                        contentLength: contentLength, chunked: head.headerFields[.transferEncoding] != nil))
                if FirstRequestWatch.stopsDecoder(
                    method: head.method.rawValue, upgrade: head.headerFields[.upgrade],
                    connection: head.headerFields[.connection])
                {
                    timeouts.lastRequestReceived()
                }
            }
        case (.watching, .body):
            break
        case (.watching, .end):
            timeouts?.requestEnded()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var response) where response.status.code >= 200:
            if timeouts?.responseStarting() == true {
                response.headerFields[.connection] = "close"
                context.write(wrapOutboundOut(.head(response)), promise: promise)
                return
            }
            context.write(data, promise: promise)
        case .head, .body:
            context.write(data, promise: promise)
        case .end:
            context.write(data, promise: promise)
            // After passing it on, so that an answer of our own that waited for it goes out after it.
            timeouts?.responseEnded()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if case .refused = state { return }
        if let parserError = error as? HTTPParserError, let timeouts {
            if timeouts.handle(parserError, from: self) {
                state = .refused
                return
            }
        }
        context.fireErrorCaught(error)
    }
}
