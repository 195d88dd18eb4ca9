import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The request context of every route: WebSocket-capable, and carrying the signed-in user
/// once ``AuthenticationMiddleware`` has run.
public struct SyncRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    /// The client's address as every per-address limit counts it (``ClientAddressKey``): an IPv4
    /// address, an IPv6 address's /64, or `local` on the Unix socket.
    public let remoteAddress: String
    /// The connection the request arrived on (test helpers close it to simulate a lost response).
    public let channel: any Channel
    /// The signed-in user's record name.
    public var userRecordName: String?
    /// The SHA-256 of the bearer token the request came with.
    public var sessionTokenHash: String?
    /// The ID of that session, as the account's list of sessions names it.
    public var sessionID: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        remoteAddress = ClientAddressKey.key(for: source.channel.remoteAddress)
        channel = source.channel
    }

    /// The signed-in user; only routes behind ``AuthenticationMiddleware`` call it.
    func requireUser() throws -> String {
        guard let userRecordName else { throw HTTPError(.unauthorized) }
        return userRecordName
    }
}
