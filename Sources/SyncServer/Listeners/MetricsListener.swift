import Hummingbird
import Logging
import NIOCore

/// The listener of `GET /metrics` alone, on an address of its own (`--metrics-listen`).
///
/// The metrics say how many requests, errors and push sockets the server has, by route and code:
/// what an operator's scraper reads, and nothing a client of the API needs. The public listener
/// does not serve them; this one serves nothing else, so that it can be bound to an address only
/// the operator's network reaches.
public enum MetricsListener {
    /// The application serving the metrics on `host:port`, ready to run in a `ServiceGroup`.
    /// - Parameter onServerRunning: called with the port once it listens (the kernel's, for port 0).
    public static func makeApplication(
        host: String, port: Int, logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router()
        router.get("metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: ServerMetrics.exposition())))
        }
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "sync-server"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger)
    }
}
