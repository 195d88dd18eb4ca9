import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOWebSocket
import SyncCore

/// `GET /v1/push`: a signed-in client's WebSocket, on which the server says when a database changed.
///
/// The socket lives as long as its session: signing out closes it (through ``PushHub``), and so
/// does the session's end (a timer per socket, see ``SessionLifetime``).
struct PushRoute {
    let pushHub: PushHub
    let store: any RecordStore
    let sessions: SessionLifetime
    /// Push sockets one account may have open on this instance.
    let maximumSockets: Int

    func register(on group: RouterGroup<SyncRequestContext>) {
        group.ws(RouterPath(Endpoint.push.pattern)) { request, context in
            let user = try context.requireUser()
            _ = try DeviceID.validated(
                request.uri.queryParameters["device"].map(String.init), source: "the device query parameter")
            // A plain GET reaches this route too: say what it takes rather than answer an empty 200.
            guard request.headers[.upgrade]?.lowercased().contains("websocket") == true else {
                throw StatusError(
                    error: SyncError(
                        .invalidArguments,
                        "GET /v1/push opens a WebSocket; connect with a WebSocket client (it sends Connection: Upgrade and Upgrade: websocket)"
                    ),
                    status: .upgradeRequired, headers: [.upgrade: "websocket"])
            }
            // Refused at the upgrade, with a body saying why, rather than opened and dropped.
            if await pushHub.connectionCount(user: user) >= maximumSockets { throw tooManySockets }
            return .upgrade([WebSocketUpgradeRouter.acceptedHeader: "1"])
        } onUpgrade: { inbound, outbound, context in
            let user = try context.requestContext.requireUser()
            guard let session = context.requestContext.sessionTokenHash else { return }
            let device = try DeviceID.validated(
                context.request.uri.queryParameters["device"].map(String.init), source: "the device query parameter")
            // A socket that opens while the server stops is told so at once, not held until the listener stops.
            if await pushHub.isStopping {
                try await outbound.close(.goingAway, reason: Self.stopping)
                return
            }
            // Counted again as it registers: sockets opening at once may have passed the check together.
            guard
                let (id, messages) = await pushHub.subscribe(
                    user: user, session: session, device: device, limit: maximumSockets)
            else {
                try await outbound.close(.policyViolation, reason: "too many push sockets for this account")
                return
            }
            defer { Task { await pushHub.unsubscribe(user: user, id: id) } }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // The client sends nothing we act on; this ends when the socket closes.
                    for try await _ in inbound {}
                }
                group.addTask {
                    let encoder = JSONEncoder()
                    let hello = String(decoding: try encoder.encode(PushMessage(event: .connected)), as: UTF8.self)
                    try await outbound.write(.text(hello))
                    // Ends when the hub closes the session (sign-out) or the server stops.
                    for await message in messages {
                        let text = String(decoding: try encoder.encode(message), as: UTF8.self)
                        try await outbound.write(.text(text))
                    }
                    try await outbound.close(
                        await pushHub.isStopping ? .goingAway : .normalClosure,
                        reason: await pushHub.isStopping ? Self.stopping : Self.sessionEnded)
                }
                group.addTask {
                    try await waitForEnd(ofSession: session)
                }
                // Whichever ends first ends the socket.
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// The close reasons: a client reconnects after the first and signs in again after the second.
    static let stopping = "the server is stopping; connect again in a moment"
    static let sessionEnded = "the session ended (signed out, revoked or expired); sign in again"

    /// The refusal of a socket beyond ``maximumSockets``.
    private var tooManySockets: SyncError {
        SyncError(
            .limitExceeded,
            "this account has \(maximumSockets) push sockets open on this server, the most it allows; close the push connection of a device you no longer use (signing that device out closes it), then connect again"
        )
    }

    /// Returns once the session is gone or has ended: it sleeps until the session's end, then looks
    /// again, since a request in the meantime moves the end. Subscribing came first, so a sign-out
    /// that this first look misses still closes the socket through the hub.
    private func waitForEnd(ofSession tokenHash: String) async throws {
        while true {
            guard let session = try await store.session(tokenHash: tokenHash) else { return }
            let now = sessions.clock.now()
            if sessions.hasEnded(session, at: now) { return }
            try await sessions.clock.sleep(for: .seconds(sessions.end(of: session).timeIntervalSince(now)))
        }
    }
}
