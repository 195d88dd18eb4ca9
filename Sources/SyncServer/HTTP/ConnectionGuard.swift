import Logging
import NIOCore

/// The first handler of every connection: counts it in the server's ``ConnectionCounter`` and
/// closes it at once when it is over the server's or its address's limit.
///
/// Over the limit, the connection is closed before a byte of it is read, with no answer: reading
/// a request to answer `503` would spend what the limit protects (a descriptor, memory, time),
/// and a client that is refused sees a network failure and retries later. The connection stays
/// counted until it closes, whatever it became: push WebSockets count too.
final class ConnectionGuard: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let counter: ConnectionCounter
    private let timeouts: RequestTimeouts
    private let logger: Logger
    /// The address the connection was counted under, once counted.
    private var countedAddress: String?

    init(counter: ConnectionCounter, timeouts: RequestTimeouts, logger: Logger) {
        self.counter = counter
        self.timeouts = timeouts
        self.logger = logger
    }

    func channelActive(context: ChannelHandlerContext) {
        // The connection's own address, never a header a client could forge; an IPv6 client counts
        // by its /64 (see ClientAddressKey).
        let address = ClientAddressKey.key(for: context.channel.remoteAddress)
        let refusal = counter.admit(from: address)
        if refusal == nil { countedAddress = address }
        context.fireChannelActive()
        if let refusal {
            ServerMetrics.countRefusedConnection(reason: "\(refusal)")
            logger.debug(
                "connection refused", metadata: ["address": "\(address)", "reason": "\(refusal)"])
            timeouts.closeNow()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let countedAddress {
            counter.release(from: countedAddress)
            self.countedAddress = nil
        }
        context.fireChannelInactive()
    }
}
