import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Push across instances: each instance's hub publishes its notices with PostgreSQL's NOTIFY, and
/// every instance LISTENs and hands the others' notices to its own hub. A device on instance 1
/// thus hears about a write made on instance 2.
///
/// The listening connection is one of the store's. When it drops (PostgreSQL restarted, network),
/// the relay connects again by itself, and then tells every socket of this instance to fetch, since
/// notices sent meanwhile were not heard.
public final class PostgresPushRelay: PushFanOut, Service {
    /// The NOTIFY channel (one per database: instances of other databases never hear these).
    static let channel = "sync_push"

    private let store: PostgresRecordStore
    private let hub: PushHub
    private let logger: Logger
    /// This instance, so that it skips its own notices (its hub has delivered them already).
    private let instance = UUID().uuidString
    private let retryDelay: Duration
    private let listening = Mutex(false)

    /// Whether it listens now (and so hears every notice other instances send from now on).
    public var isListening: Bool { listening.withLock { $0 } }

    public init(store: PostgresRecordStore, hub: PushHub, logger: Logger, retryDelay: Duration = .seconds(1)) {
        self.store = store
        self.hub = hub
        self.logger = logger
        self.retryDelay = retryDelay
    }

    private struct Envelope: Codable {
        var from: String
        var notice: PushNotice
    }

    public func publish(_ notice: PushNotice) async {
        do {
            let payload = String(
                decoding: try JSONEncoder().encode(Envelope(from: instance, notice: notice)), as: UTF8.self)
            try await store.query("SELECT pg_notify(\(Self.channel), \(payload))", logger: logger)
        } catch {
            // The write itself succeeded; other instances' devices hear of it at their next fetch or
            // when this relay reconnects.
            logger.warning(
                "could not tell other instances of a change", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    /// Listens until the server shuts down, connecting again whenever the connection drops.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            var missedSome = false
            while !Task.isCancelled {
                let refetchFirst = missedSome
                do {
                    try await self.store.withConnection { connection in
                        try await connection.listen(on: Self.channel) { notifications in
                            self.listening.withLock { $0 = true }
                            defer { self.listening.withLock { $0 = false } }
                            if refetchFirst {
                                self.logger.notice(
                                    "listening for other instances' changes again; every socket refetches")
                                await self.hub.refetchAll()
                            }
                            for try await notification in notifications {
                                await self.deliver(notification.payload)
                            }
                        }
                    }
                } catch {
                    if Task.isCancelled { return }
                    self.logger.warning(
                        "lost the connection that carries other instances' changes; connecting again",
                        metadata: ["error": "\(String(reflecting: error))"])
                }
                missedSome = true
                try? await Task.sleep(for: self.retryDelay)
            }
        }
    }

    private func deliver(_ payload: String) async {
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(payload.utf8)) else {
            logger.warning("ignored a push notice that is not one", metadata: ["payload": "\(payload.prefix(200))"])
            return
        }
        guard envelope.from != instance else { return }
        await hub.receive(envelope.notice)
    }
}
