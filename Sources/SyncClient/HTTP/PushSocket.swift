import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import SyncCore

/// The project's one push-socket client: `GET /v1/push` upgraded to a WebSocket, on which the
/// server says "connected" once, then "changed" whenever the account's data changed elsewhere.
///
/// The engine listens with it to know when to fetch; the test client records what it hears.
package enum PushSocket {
    /// Opens the socket and hands every message to `received` until the server closes it or the
    /// task is cancelled. Throws when the socket cannot be opened or breaks off.
    package static func listen(
        serverURL: URL, token: String, deviceID: String?, maximumMessageSize: Int = 1 << 16,
        received: @escaping @Sendable (PushMessage) async -> Void
    ) async throws {
        var base = serverURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let url =
            base.replacingOccurrences(of: "http://", with: "ws://").replacingOccurrences(of: "https://", with: "wss://")
            + "/v1/push" + (deviceID.map { "?device=\($0)" } ?? "")
        var logger = Logger(label: "sync-push")
        logger.logLevel = .critical
        try await WebSocketClient.connect(
            url: url, configuration: .init(additionalHeaders: [.authorization: "Bearer \(token)"]), logger: logger
        ) { inbound, _, _ in
            for try await message in inbound.messages(maxSize: maximumMessageSize) {
                // Anything but a push message (a future kind, a broken one) is not ours to act on.
                guard case .text(let text) = message,
                    let push = try? JSONDecoder().decode(PushMessage.self, from: Data(text.utf8))
                else { continue }
                await received(push)
            }
        }
    }
}
