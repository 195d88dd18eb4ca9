import NIOHTTP1
import Synchronization

/// Answers a sync server's HTTP requests without a socket, for a server running in the same
/// process: the test support (SyncTesting) registers one for each server it starts that way, and
/// ``ServerConnection`` hands every request to that server's base URL to it instead of the network.
///
/// Package-internal: only tests register one, so an app's requests always go over the network.
package protocol InProcessTransport: Sendable {
    /// Answers one request; `path` is what follows the base URL. Throws when the exchange broke
    /// off without an answer (as a dropped connection would).
    func exchange(_ method: HTTPMethod, _ path: String, headers: [(String, String)], body: [UInt8]?) async throws
        -> HTTPAnswer
}

/// The in-process transports, by the base URL (``ServerConnection/base``) they answer for.
package enum InProcessTransports {
    private static let byBase = Mutex<[String: any InProcessTransport]>([:])

    /// Sends requests to `base` through `transport` until ``remove(_:)``.
    package static func register(_ transport: any InProcessTransport, for base: String) {
        byBase.withLock { $0[base] = transport }
    }

    /// Stops answering for `base`: its requests go to the network again (where nothing listens).
    package static func remove(_ base: String) {
        _ = byBase.withLock { $0.removeValue(forKey: base) }
    }

    /// The transport answering for `base`, if one is registered.
    static func transport(for base: String) -> (any InProcessTransport)? {
        byBase.withLock { $0[base] }
    }
}
