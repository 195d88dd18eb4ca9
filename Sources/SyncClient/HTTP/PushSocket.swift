import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import SyncCore

/// The project's one push-socket client: `GET /v1/push` upgraded to a WebSocket, on which the
/// server says "connected" once, then "changed" whenever the account's data changed elsewhere.
///
/// The engine listens with it to know when to fetch; the test client records what it hears. It
/// speaks WebSocket through SwiftNIO directly, because it must reach the server wherever
/// ``ServerConnection`` does: over TCP, over TLS with ``TransportSecurity``'s trust roots, and over a
/// Unix domain socket (which HummingbirdWSClient cannot connect to). The endpoint is checked first,
/// exactly as for requests (``ServerEndpoint/verify(sendingSecrets:_:)``): the token is sent nowhere
/// a request would not send it.
package enum PushSocket {
    /// How the server closed the socket: the WebSocket close code and the reason it gave.
    package struct Closure: Sendable, Equatable {
        /// The close code (1000 normal, 1001 going away, 1008 policy violation); nil when none was sent.
        package var code: UInt16?
        /// The reason, as UTF-8 text; empty when none was given.
        package var reason: String
    }

    private enum Upgrade: Sendable {
        case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    /// Opens the socket and hands every message to `received` until the server closes it or the
    /// task is cancelled; returns how the server closed it (nil when the connection just ended).
    /// Throws when the socket cannot be opened or breaks off.
    @discardableResult
    package static func listen(
        serverURL: URL, token: String, deviceID: String?, maximumMessageSize: Int = 1 << 16,
        received: @escaping @Sendable (PushMessage) async -> Void
    ) async throws -> Closure? {
        let endpoint = try ServerEndpoint(serverURL)
        let security = TransportSecurity.current
        try endpoint.verify(sendingSecrets: true, security)
        let upgrade = try await connect(
            endpoint, security: security, token: token, deviceID: deviceID, maximumMessageSize: maximumMessageSize)
        guard case .webSocket(let channel) = upgrade else {
            throw SyncError(.networkFailure, "the server refused to open the push socket")
        }
        return try await channel.executeThenClose { inbound, outbound in
            for try await frame in inbound {
                switch frame.opcode {
                case .text:
                    // Anything but a push message (a future kind, a broken one) is not ours to act on.
                    let data = Data(frame.unmaskedData.readableBytesView)
                    guard let push = try? JSONReader.decode(PushMessage.self, from: data) else { continue }
                    await received(push)
                case .ping:
                    try await outbound.write(
                        WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData))
                case .connectionClose:
                    // Answer the close, as the protocol asks, then stop.
                    var data = frame.unmaskedData
                    let code = data.readSlice(length: 2) ?? ByteBuffer()
                    try? await outbound.write(
                        WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: code))
                    return Closure(
                        code: code.getInteger(at: code.readerIndex, as: UInt16.self),
                        reason: String(decoding: data.readableBytesView.prefix(123), as: UTF8.self))
                default:
                    continue
                }
            }
            return nil
        }
    }

    private static func connect(
        _ endpoint: ServerEndpoint, security: TransportSecurity, token: String, deviceID: String?,
        maximumMessageSize: Int
    ) async throws -> Upgrade {
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer \(token)")
        headers.add(name: "Content-Length", value: "0")
        let query = deviceID.map { "?device=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" }
        let sslContext: NIOSSLContext?
        switch endpoint {
        case .tcp(let host, let port, let tls):
            headers.add(name: "Host", value: "\(host):\(port)")
            sslContext = tls ? try ServerConnection.sslContext(security) : nil
        case .unixSocket:
            headers.add(name: "Host", value: "localhost")
            sslContext = nil
        }
        let head = HTTPRequestHead(
            version: .http1_1, method: .GET, uri: Endpoint.push.path() + (query ?? ""), headers: headers)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<EventLoopFuture<Upgrade>> = { channel in
            channel.eventLoop.makeCompletedFuture {
                if let sslContext, case .tcp(let host, _, _) = endpoint {
                    let isAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
                    try channel.pipeline.syncOperations.addHandler(
                        try NIOSSLClientHandler(context: sslContext, serverHostname: isAddress ? nil : host))
                }
                let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
                    maxFrameSize: max(maximumMessageSize, 1 << 12),
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                NIOWebSocketFrameAggregator(
                                    minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64,
                                    maxAccumulatedFrameSize: maximumMessageSize))
                            return .webSocket(
                                try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(
                                    wrappingChannelSynchronously: channel))
                        }
                    })
                let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                    upgradeRequestHead: head, upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in
                        channel.close(promise: nil)
                        return channel.eventLoop.makeSucceededFuture(.refused)
                    })
                var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                // The server's first message may arrive in the same read as its 101 answer: dropping the
                // bytes left after the answer (NIO's default) lost that "connected" now and then.
                pipeline.leftOverBytesStrategy = .forwardBytes
                return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                    configuration: pipeline)
            }
        }
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(5))
        let negotiation: EventLoopFuture<Upgrade>
        do {
            switch endpoint {
            case .tcp(let host, let port, _):
                negotiation = try await bootstrap.connect(host: host, port: port, channelInitializer: initializer)
            case .unixSocket(let path):
                negotiation = try await bootstrap.connect(unixDomainSocketPath: path, channelInitializer: initializer)
            }
            return try await negotiation.get()
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(
                .networkFailure, "could not open the push socket at \(endpoint): \(ConnectionFailure.describe(error))")
        }
    }
}
