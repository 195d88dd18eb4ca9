import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import SyncCore

/// Hummingbird's HTTP/1.1 channel with WebSocket upgrade, with the defences of
/// ``SyncServerConfiguration/HTTPLimits`` around it.
///
/// Each connection's pipeline, front to back:
///
/// ```
/// ConnectionGuard → RequestTimeouts → HTTP encoder/decoder → FirstRequestWatch → upgrade handler
///   (after the first request, on HTTP connections: → HTTP types codec → RequestWatch → Hummingbird)
/// ```
///
/// The decoder refuses heads over ``SyncServerConfiguration/HTTPLimits/maximumHeaderBytes``.
struct DefendedHTTPChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value
    private typealias UpgradeHandler = NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>

    let inner: HTTP1WebSocketUpgradeChannel
    let limits: SyncServerConfiguration.HTTPLimits
    let maximumRequestBytes: Int
    let counter: ConnectionCounter

    /// The server builder for `Application(server:)`.
    /// - Parameters:
    ///   - webSocketRouter: decides which upgrade requests become WebSockets.
    ///   - webSocket: the WebSocket settings (its automatic ping is what ends dead push sockets).
    static func builder(
        webSocketRouter: WebSocketUpgradeRouter, webSocket: WebSocketServerConfiguration,
        configuration: SyncServerConfiguration
    ) -> HTTPServerBuilder {
        let webSocketResponder = webSocketRouter.buildResponder()
        let limits = configuration.http
        let maximumRequestBytes = configuration.limits.maximumRequestBytes
        let counter = ConnectionCounter(
            maximum: limits.maximumConnections, maximumPerAddress: limits.maximumConnectionsPerAddress)
        let headerBytes = max(1, limits.maximumHeaderBytes)
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestWatch(maximumRequestBytes: maximumRequestBytes)],
            // RequestTimeouts keeps the idle timeout, for the first request too.
            idleTimeout: nil,
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: headerBytes, maxHeaderListSize: headerBytes, maxHeaderFieldCount: 1000))
        return HTTPServerBuilder { responder in
            DefendedHTTPChannel(
                inner: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder,
                    configuration: .init(http1: http1, ws: webSocket)),
                limits: limits, maximumRequestBytes: maximumRequestBytes, counter: counter)
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let timeouts = RequestTimeouts(limits: limits, logger: logger)
        do {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(timeouts, position: .first)
            try pipeline.addHandler(
                ConnectionGuard(counter: counter, timeouts: timeouts, logger: logger), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let maximumRequestBytes = self.maximumRequestBytes
        return inner.setup(channel: channel, logger: logger).assumeIsolated().flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let upgrader = try pipeline.handler(type: UpgradeHandler.self)
            let watch = FirstRequestWatch(timeouts: timeouts, maximumRequestBytes: maximumRequestBytes)
            try pipeline.addHandler(watch, position: .before(upgrader))
            timeouts.negotiation = watch
            upgrader.upgradeResultFuture.assumeIsolated().whenComplete { result in
                switch result {
                case .success(.websocket): timeouts.negotiationEnded(.webSocket)
                case .success(.notUpgraded): timeouts.negotiationEnded(watch.askedForUpgrade ? .upgradeNotDone : .http)
                case .success(.failedUpgrade): timeouts.negotiationEnded(.http)
                case .failure: timeouts.negotiationEnded(.failed)
                }
            }
            return value
        }.nonisolated()
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
        // Whatever the connection became, it is done with now; a failed negotiation would
        // otherwise leave it open.
        try? await value.channel.close()
    }
}
