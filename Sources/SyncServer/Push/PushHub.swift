import Foundation
import SyncCore

/// Fans database-change notices out to the push sockets of the user they concern, and to no one else.
///
/// Each socket is registered under its user and under the session it was opened with, so that
/// signing out (or the session ending) closes exactly that session's sockets.
public actor PushHub {
    private struct Subscriber {
        let device: String?
        let session: String
        let continuation: AsyncStream<PushMessage>.Continuation

        /// Ends the socket's stream (its handler returns and the socket closes).
        func end() {
            continuation.finish()
            ServerMetrics.pushSocketClosed()
        }
    }

    private var subscribers: [String: [UUID: Subscriber]] = [:]
    /// Sockets whose handlers have not returned yet, ended or not: a stopping server waits for them
    /// to say why they close.
    private var running: Set<UUID> = []
    /// Where notices go to reach the other instances' sockets, when there are other instances.
    private var fanOut: (any PushFanOut)?
    /// Socket IDs by session token hash, and the user each belongs to.
    private var sessions: [String: (user: String, ids: Set<UUID>)] = [:]

    public init() {}

    /// Sends every notice of this hub on to `fanOut` as well, for the sockets of other instances.
    public func fanOut(to fanOut: any PushFanOut) {
        self.fanOut = fanOut
    }

    /// Registers a socket of `user`, opened with the session whose token hash is `session`; `device`
    /// names the device so that its own changes are not echoed to it.
    public func subscribe(user: String, session: String, device: String?) -> (
        id: UUID, messages: AsyncStream<PushMessage>
    ) {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: PushMessage.self, bufferingPolicy: .bufferingNewest(16))
        subscribers[user, default: [:]][id] = Subscriber(device: device, session: session, continuation: continuation)
        ServerMetrics.pushSocketOpened()
        running.insert(id)
        sessions[session, default: (user, [])].ids.insert(id)
        return (id, stream)
    }

    /// Registers a socket as ``subscribe(user:session:device:)`` does, unless `user` has `limit`
    /// sockets open already: then nil, and nothing is registered.
    public func subscribe(user: String, session: String, device: String?, limit: Int) -> (
        id: UUID, messages: AsyncStream<PushMessage>
    )? {
        guard connectionCount(user: user) < limit else { return nil }
        return subscribe(user: user, session: session, device: device)
    }

    /// Removes a socket, once its handler is done.
    public func unsubscribe(user: String, id: UUID) {
        running.remove(id)
        guard let subscriber = subscribers[user]?.removeValue(forKey: id) else { return }
        subscriber.end()
        if subscribers[user]?.isEmpty == true { subscribers[user] = nil }
        sessions[subscriber.session]?.ids.remove(id)
        if sessions[subscriber.session]?.ids.isEmpty == true { sessions[subscriber.session] = nil }
    }

    /// Ends the streams of every socket opened with the session whose token hash is `session`:
    /// their handlers return and the server closes the sockets.
    public func closeSession(_ session: String) async {
        closeLocalSession(session)
        await fanOut?.publish(.sessionClosed(session: session))
    }

    private func closeLocalSession(_ session: String) {
        guard let (user, ids) = sessions.removeValue(forKey: session) else { return }
        for id in ids {
            subscribers[user]?.removeValue(forKey: id)?.end()
        }
        if subscribers[user]?.isEmpty == true { subscribers[user] = nil }
    }

    /// Tells every socket of `user`, except the one of `excludingDevice`, that a database changed.
    public func notify(user: String, scope: DatabaseScope, excludingDevice: String?) async {
        notifyLocal(user: user, scope: scope, excludingDevice: excludingDevice)
        await fanOut?.publish(.changed(user: user, scope: scope, excludingDevice: excludingDevice))
    }

    private func notifyLocal(user: String, scope: DatabaseScope, excludingDevice: String?) {
        for subscriber in subscribers[user, default: [:]].values
        where excludingDevice == nil || subscriber.device != excludingDevice {
            subscriber.continuation.yield(PushMessage(event: .databaseChanged, scope: scope))
        }
    }

    /// Applies a notice another instance sent, to this instance's sockets.
    public func receive(_ notice: PushNotice) {
        switch notice {
        case .changed(let user, let scope, let excludingDevice):
            notifyLocal(user: user, scope: scope, excludingDevice: excludingDevice)
        case .sessionClosed(let session):
            closeLocalSession(session)
        }
    }

    /// Tells every socket that its databases may have changed: after notices may have been missed
    /// (another instance's were not heard while the connection that carries them was down).
    public func refetchAll() {
        for subscribers in subscribers.values {
            for subscriber in subscribers.values {
                for scope in DatabaseScope.allCases {
                    subscriber.continuation.yield(PushMessage(event: .databaseChanged, scope: scope))
                }
            }
        }
    }

    /// Whether ``closeAll()`` ran: the server is stopping, and sockets that end say so.
    public private(set) var isStopping = false

    /// Ends every socket's stream, so that their handlers return and the server can stop.
    public func closeAll() {
        isStopping = true
        for subscribers in subscribers.values {
            for subscriber in subscribers.values { subscriber.end() }
        }
        subscribers = [:]
        sessions = [:]
    }

    /// How many sockets' handlers are still running (``closeAll()`` ends them; each then closes its socket).
    public var runningSocketCount: Int { running.count }

    /// How many sockets `user` has open.
    public func connectionCount(user: String) -> Int {
        subscribers[user]?.count ?? 0
    }
}

/// A notice for push sockets, as it travels between instances.
public enum PushNotice: Sendable, Hashable, Codable {
    /// A database of `user` changed; the sockets of `excludingDevice` made the change and are not told.
    case changed(user: String, scope: DatabaseScope, excludingDevice: String?)
    /// The session whose token hash is `session` ended: its sockets close.
    case sessionClosed(session: String)
}

/// Carries a hub's notices to the hubs of the other instances serving the same store.
public protocol PushFanOut: Sendable {
    func publish(_ notice: PushNotice) async
}
