import Foundation
import Hummingbird
import HummingbirdWebSocket
import SyncCore

/// `GET /v1/push`: a signed-in client's WebSocket, on which the server says when a database changed.
struct PushRoute {
    let pushHub: PushHub

    func register(on group: RouterGroup<SyncRequestContext>) {
        group.ws("push") { _, context in
            _ = try context.requireUser()
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let user = try context.requestContext.requireUser()
            let device = context.request.uri.queryParameters["device"].map(String.init)
            let (id, messages) = await pushHub.subscribe(user: user, device: device)
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
                    for await message in messages {
                        let text = String(decoding: try encoder.encode(message), as: UTF8.self)
                        try await outbound.write(.text(text))
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}
