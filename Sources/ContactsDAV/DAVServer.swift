import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Listeners
import LocalSystem
import Logging
import NIOCore
import ServiceLifecycle

/// The bridge's HTTP listener: loopback by default; any other address only with TLS.
public struct DAVServer: Sendable {
    public var address: ListenAddress
    public var tls: TLSFiles?

    /// A listener on `address`; without `tls`, only where every address its host resolves to is a loopback
    /// one (`resolve` is the system's resolver, or a test's). Without TLS, the bridge then listens on the
    /// address it checked, not on the name: a second lookup could answer otherwise.
    /// - Throws: ``BridgeError/plainTextBeyondLoopback(_:)`` naming the addresses found.
    public init(
        address: ListenAddress, tls: TLSFiles?, resolve: (String) -> [String] = HostAddresses.resolve
    ) throws {
        var address = address
        if tls == nil {
            let resolved = resolve(address.host)
            guard let first = resolved.first, resolved.allSatisfy(HostAddresses.isLoopback(numeric:)) else {
                let found = resolved.isEmpty ? "which does not resolve" : "which is " + resolved.joined(separator: ", ")
                throw BridgeError.plainTextBeyondLoopback("\(address) (\(found))")
            }
            address.host = first
        }
        self.address = address
        self.tls = tls
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
