import Foundation
import SyncCore

/// Fans database-change notices out to the push sockets of the user they concern, and to no one else.
public actor PushHub {
    private struct Subscriber {
        let device: String?
        let continuation: AsyncStream<PushMessage>.Continuation
    }

    private var subscribers: [String: [UUID: Subscriber]] = [:]

    public init() {}

    /// Registers a socket of `user`; `device` names the device so that its own changes are not echoed to it.
    public func subscribe(user: String, device: String?) -> (id: UUID, messages: AsyncStream<PushMessage>) {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: PushMessage.self, bufferingPolicy: .bufferingNewest(16))
        subscribers[user, default: [:]][id] = Subscriber(device: device, continuation: continuation)
        return (id, stream)
    }

    /// Removes a socket.
    public func unsubscribe(user: String, id: UUID) {
        subscribers[user]?.removeValue(forKey: id)?.continuation.finish()
        if subscribers[user]?.isEmpty == true { subscribers[user] = nil }
    }

    /// Tells every socket of `user`, except the one of `excludingDevice`, that a database changed.
    public func notify(user: String, scope: DatabaseScope, excludingDevice: String?) {
        for subscriber in subscribers[user, default: [:]].values
        where excludingDevice == nil || subscriber.device != excludingDevice {
            subscriber.continuation.yield(PushMessage(event: .databaseChanged, scope: scope))
        }
    }

    /// Ends every socket's stream, so that their handlers return and the server can stop.
    public func closeAll() {
        for subscribers in subscribers.values {
            for subscriber in subscribers.values { subscriber.continuation.finish() }
        }
        subscribers = [:]
    }

    /// How many sockets `user` has open.
    public func connectionCount(user: String) -> Int {
        subscribers[user]?.count ?? 0
    }
}
