import Logging
import NIOCore
import NIOHTTP1

/// Keeps each connection's clock: the request-head, idle and request-body timeouts, and the
/// answers the HTTP layer gives by itself (``HTTPRefusal``).
///
/// It sits at the front of the pipeline, where it sees every byte as it arrives, and learns where
/// requests begin and end from ``FirstRequestWatch`` and ``RequestWatch`` behind the decoder. At
/// any moment the connection has at most one deadline:
///
/// - a head is due (from the connection's opening for its first request, else from the next
///   request's first byte): the whole head must arrive by then;
/// - a body is due (from its head): the whole body must arrive by then;
/// - nothing is owed by either side (every request answered): the idle timeout;
/// - the server owes an answer, or the connection became a push WebSocket: no deadline.
///
/// When the deadline passes, the connection is closed. Time the server spends not reading (its
/// request handler has not yet taken what arrived, so the socket is not read) does not count
/// against the client: the deadline moves by that much.
///
/// An answer of its own goes out in its request's turn, after the responses owed before it. One
/// that closes the connection shuts the connection's output after it, then reads and drops what
/// the client still sends (so that the client reads the answer rather than a reset) until the
/// client closes its side or a head timeout passes, and closes.
final class RequestTimeouts: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    // Writes pass through untouched (never unwrapped).
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// How the negotiation of the connection's first request ended (see ``DefendedHTTPChannel``).
    enum Negotiation {
        /// An HTTP connection: its requests and responses are reported.
        case http
        /// A push WebSocket: no timeouts any more.
        case webSocket
        /// A request asking for an upgrade the server does not do, which the upgrade handler
        /// consumed without passing it on: nothing would answer it.
        case upgradeNotDone
        /// The negotiation failed (a malformed sequence of parts); nothing will serve the
        /// connection.
        case failed
    }

    /// The body a request head announces.
    enum Body: Equatable {
        /// Of a declared length (`Content-Length`).
        case sized
        /// Of a length not known in advance (`Transfer-Encoding: chunked`).
        case chunked
    }

    private enum Reading: Equatable {
        /// Nothing of a next request has arrived.
        case nothing
        case head
        case body(Body)
    }

    /// An answer the connection owes, in the order of the requests.
    private enum Owed {
        /// A response the server's routes write.
        case route
        /// An answer of our own, written by the watch that refused the request when its turn comes.
        case refusal(HTTPRefusal, writer: any RefusalWriter)
    }

    private enum Mode {
        case http
        /// A refusal that closes the connection is owed: nothing more is read as HTTP.
        case refusing
        /// The last answer is out and the output shut; dropping what the client still sends.
        case lingering
        case webSocket
        case closed
    }

    private let limits: SyncServerConfiguration.HTTPLimits
    private let logger: Logger
    private var context: ChannelHandlerContext?
    private var mode = Mode.http
    private var reading = Reading.head
    private var owed: [Owed] = []
    private var deadline: NIODeadline?
    private var timer: Scheduled<Void>?
    private var timerDeadline: NIODeadline?
    /// When the server last stopped reading the socket, while it has not asked for more.
    private var pausedSince: NIODeadline?
    private var started = false
    /// Whether the response being written said `Connection: close` (see ``responseStarting()``).
    private var closesAfterResponse = false
    /// Whether the client has said it sends no more (a half-close).
    private var inputClosed = false
    /// Closes asked for while lingering, completed when the connection really closes.
    private var deferredCloses: [EventLoopPromise<Void>] = []
    /// The watch of the first request, while the negotiation that request started is not over.
    var negotiation: FirstRequestWatch?

    init(limits: SyncServerConfiguration.HTTPLimits, logger: Logger) {
        self.limits = limits
        self.logger = logger
    }

    // MARK: What the watches report

    /// A request head was passed on to be served.
    /// - Parameter body: the body it announces, if any.
    func requestHeadReceived(body: Body?) {
        guard case .http = mode else { return }
        owed.append(.route)
        startReading(body: body)
    }

    /// A request's body (or bodiless request) ended, a refused one's included.
    func requestEnded() {
        guard case .http = mode, case .body = reading else { return }
        readNothing()
    }

    /// A route's response is about to start; returns true when the connection will close after
    /// it, so that the response says `Connection: close` (and no client sends another request on
    /// it).
    ///
    /// That is after the last request the decoder reads (see ``lastRequestReceived()``), and when
    /// the route answers before a chunked body has arrived (a `413` for one that grew too large):
    /// the body could go on forever, so the connection closes after the answer instead of reading
    /// it. A body of declared length is read to its end as usual.
    func responseStarting() -> Bool {
        guard case .http = mode, owed.count == 1 else { return false }
        if reading == .body(.chunked) { closesAfterResponse = true }
        return closesAfterResponse
    }

    /// The request just reported is the last the decoder will read on this connection (a
    /// `CONNECT`, or an upgrade the server does not do: the decoder stops after them, and what
    /// follows would wait for an answer forever). Its response says `Connection: close`, and the
    /// connection closes after it.
    func lastRequestReceived() {
        guard case .http = mode else { return }
        closesAfterResponse = true
    }

    /// A route's response ended.
    func responseEnded() {
        if case .route = owed.first { owed.removeFirst() }
        guard case .http = mode else {
            if case .refusing = mode { writeAnswersDue() }
            return
        }
        if owed.isEmpty && closesAfterResponse {
            linger()
            return
        }
        writeAnswersDue()
        if case .http = mode, owed.isEmpty, reading == .nothing { readNothing() }
    }

    /// A request gets `refusal` instead of being served, written by `writer` in its turn. Its
    /// body, if the refusal keeps the connection, is read and dropped (the watch that refused it
    /// reports its end).
    func refuse(_ refusal: HTTPRefusal, by writer: any RefusalWriter) {
        guard case .http = mode else { return }
        logger.debug("request refused", metadata: ["status": "\(refusal.status)", "reason": "\(refusal.error)"])
        owed.append(.refusal(refusal, writer: writer))
        if refusal.closesConnection {
            // Nothing after it is read as HTTP; no deadline while the server finishes what it owes.
            mode = .refusing
            reading = .nothing
            setDeadline(nil)
        } else {
            startReading(body: .sized)
        }
        writeAnswersDue()
    }

    /// Decides what becomes of a decoding error: true when it is answered here (and must not go
    /// further), false when the request it belongs to is being served and should fail with it.
    func handle(_ error: HTTPParserError, from writer: any RefusalWriter) -> Bool {
        guard case .http = mode else { return true }
        if case .body = reading, case .route = owed.last { return false }
        refuse(.answering(error, maximumHeaderBytes: limits.maximumHeaderBytes), by: writer)
        return true
    }

    /// The negotiation of the first request is over.
    func negotiationEnded(_ outcome: Negotiation) {
        let watch = negotiation
        negotiation = nil
        switch outcome {
        case .http:
            break
        case .webSocket:
            if case .http = mode {
                mode = .webSocket
                setDeadline(nil)
            }
        case .upgradeNotDone:
            // The request the watch reported will get no response: ours replaces it.
            if case .route = owed.first { owed.removeFirst() }
            if let watch { refuse(.upgradeNotDone, by: watch) } else { closeNow() }
        case .failed:
            if case .http = mode { closeNow() }
        }
    }

    /// Closes the connection now (a timeout, a connection over the limit).
    func closeNow() {
        switch mode {
        case .closed, .lingering: return
        case .http, .refusing, .webSocket: break
        }
        mode = .closed
        setDeadline(nil)
        abandonNegotiation()
        context?.close(promise: nil)
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        mode = .closed
        negotiation = nil
        setDeadline(nil)
        let closes = deferredCloses
        deferredCloses = []
        for promise in closes { promise.succeed() }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch mode {
        case .http:
            if reading == .nothing {
                reading = .head
                setDeadline(.now() + TimeAmount(limits.requestHeadTimeout))
            }
            context.fireChannelRead(data)
        case .webSocket:
            context.fireChannelRead(data)
        case .refusing, .lingering, .closed:
            // After a request refused for good, nothing the client sends is read as HTTP.
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Until the server asks for more (`read`), the client is not the one keeping it waiting.
        pausedSince = .now()
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if let pausedSince {
            self.pausedSince = nil
            if let deadline {
                setDeadline(deadline + (.now() - pausedSince))
            }
        }
        context.read()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputClosed = true
            if case .lingering = mode {
                // The client has sent all it will and our answer is out.
                finishLingering()
                return
            }
        }
        if event is ChannelShouldQuiesceEvent {
            // The server is stopping. A connection that owes nothing closes now rather than keep
            // the shutdown waiting for its timeout; one whose answer is out stops lingering.
            if case .http = mode, owed.isEmpty, !isReadingBody {
                closeNow()
                return
            }
            if case .lingering = mode {
                finishLingering()
                return
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func close(context: ChannelHandlerContext, mode closeMode: CloseMode, promise: EventLoopPromise<Void>?) {
        if case .lingering = mode, closeMode == .all {
            // Closing now would reset the connection and could destroy the answer before the
            // client reads it: close when lingering is over.
            if let promise { deferredCloses.append(promise) }
            return
        }
        context.close(mode: closeMode, promise: promise)
    }

    // MARK: Private

    private func start() {
        guard !started else { return }
        started = true
        setDeadline(.now() + TimeAmount(limits.requestHeadTimeout))
    }

    private func startReading(body: Body?) {
        if let body {
            reading = .body(body)
            setDeadline(.now() + TimeAmount(limits.requestBodyTimeout))
        } else {
            readNothing()
        }
    }

    /// Nothing of a next request has arrived: idle if nothing is owed, else the server's turn.
    private func readNothing() {
        reading = .nothing
        setDeadline(owed.isEmpty ? .now() + TimeAmount(limits.idleTimeout) : nil)
    }

    /// Writes the answers of our own whose turn has come; lingers after one that closes.
    private func writeAnswersDue() {
        while case .refusal(let refusal, let writer) = owed.first {
            owed.removeFirst()
            writer.write(refusal)
            if refusal.closesConnection {
                linger()
                return
            }
        }
    }

    /// Shuts the output after what was written, and drops what the client sends until it closes
    /// its side or a head timeout passes.
    private func linger() {
        guard let context else { return }
        mode = .lingering
        reading = .nothing
        owed = []
        context.flush()
        context.close(mode: .output, promise: nil)
        setDeadline(.now() + TimeAmount(limits.requestHeadTimeout))
        abandonNegotiation()
        // A client that half-closed already has nothing more to send: no need to wait for it.
        if inputClosed { finishLingering() }
    }

    private func finishLingering() {
        guard case .lingering = mode, let context else { return }
        mode = .closed
        setDeadline(nil)
        let closes = deferredCloses
        deferredCloses = []
        let closed = context.eventLoop.makePromise(of: Void.self)
        closed.futureResult.whenComplete { _ in
            // Closed either way (it may have closed already): what they asked for is done.
            for promise in closes { promise.succeed() }
        }
        context.close(mode: .all, promise: closed)
    }

    /// The upgrade handler waits for the first request's parts; tell it none will come, so that it
    /// ends its wait as for a client that went away.
    private func abandonNegotiation() {
        let watch = negotiation
        negotiation = nil
        watch?.abandon()
    }

    private func setDeadline(_ newDeadline: NIODeadline?) {
        deadline = newDeadline
        guard let newDeadline else {
            cancelTimer()
            return
        }
        if timer != nil, let timerDeadline, timerDeadline <= newDeadline { return }
        cancelTimer()
        guard let context else { return }
        timerDeadline = newDeadline
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: newDeadline) { [self] in
            timerFired()
        }
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
        timerDeadline = nil
    }

    private func timerFired() {
        timer = nil
        timerDeadline = nil
        guard let deadline else { return }
        guard NIODeadline.now() >= deadline else {
            setDeadline(deadline)
            return
        }
        switch mode {
        case .lingering:
            finishLingering()
        case .http, .refusing:
            // The server has not asked for more since it last read: the client is not the one
            // late. `read` moves the deadline by the pause and arms the timer again.
            if pausedSince != nil { return }
            logger.debug("connection timed out", metadata: ["waitingFor": "\(waitingFor)"])
            closeNow()
        case .webSocket, .closed:
            break
        }
    }

    private var isReadingBody: Bool {
        if case .body = reading { true } else { false }
    }

    private var waitingFor: String {
        switch reading {
        case .head: "request head"
        case .body: "request body"
        case .nothing: "next request (idle)"
        }
    }
}

extension TimeAmount {
    /// The duration as a `TimeAmount`, clamped to what one can hold.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let limit = Int64.max / 1_000_000_000 - 1
        if seconds >= limit {
            self = .nanoseconds(Int64.max)
        } else if seconds <= -limit {
            self = .nanoseconds(Int64.min)
        } else {
            self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }
}
