import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import ServiceLifecycle
import SyncServer

/// The bridge's HTTP listener: loopback by default; any other address only with TLS.
public struct DAVServer: Sendable {
    public var address: ListenAddress
    public var tls: TLSFiles?

    public init(address: ListenAddress, tls: TLSFiles?) throws {
        guard tls != nil || Self.isLoopback(address.host) else {
            throw BridgeError.plainTextBeyondLoopback(address.description)
        }
        self.address = address
        self.tls = tls
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.") && host.split(separator: ".").count == 4
    }

    /// The bridge as a service: serves until its service group shuts down; `onListening` gets the port
    /// (the one picked, for port 0).
    public func service(bridge: DAVBridge, logger: Logger, onListening: @escaping @Sendable (Int) async -> Void)
        throws -> some Service
    {
        let responder = CallbackResponder<BasicRequestContext> { request, _ in await bridge.respond(to: request) }
        // A connection that sends nothing for a minute is closed: one that opens and waits holds nothing long.
        let http: HTTPServerBuilder = .http1(configuration: .init(idleTimeout: .seconds(60)))
        let server: HTTPServerBuilder =
            try tls.map { try HTTPServerBuilder.tls(http, tlsConfiguration: try $0.serverConfiguration()) } ?? http
        return Application(
            responder: responder, server: server,
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: "contacts-dav"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? address.port) },
            logger: logger)
    }
}
