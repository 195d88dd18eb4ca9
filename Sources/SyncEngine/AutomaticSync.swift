import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import SyncCore
import Synchronization

/// Decides when an engine with `automaticallySync` talks to the server: after local changes
/// (briefly debounced), on a push, at start, and again after a transient failure.
///
/// A placeholder for the scheduler actor to come: it is the seam where that plugs in.
final class AutomaticSync: Sendable {
    enum Signal: Sendable {
        case localChanges
        case serverChanges
    }

    private let signals: AsyncStream<Signal>.Continuation
    private let stream: AsyncStream<Signal>
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let pushListener = Mutex<Task<Void, Never>?>(nil)
    /// Whether the push socket is connected, for status displays and tests.
    let pushConnected = Mutex(false)

    init() {
        (stream, signals) = AsyncStream.makeStream(of: Signal.self)
    }

    func localChangesArrived() {
        signals.yield(.localChanges)
    }

    func serverChangesArrived() {
        signals.yield(.serverChanges)
    }

    func start(engine: SyncEngine) {
        let stream = self.stream
        let loop = Task { [weak engine] in
            var wantSend = true
            var wantFetch = true
            var iterator = stream.makeAsyncIterator()
            var failures = 0
            while !Task.isCancelled {
                if !wantSend && !wantFetch {
                    guard let signal = await iterator.next() else { return }
                    switch signal {
                    case .localChanges: wantSend = true
                    case .serverChanges: wantFetch = true
                    }
                    // Let a burst of edits settle into one send.
                    try? await Task.sleep(for: .milliseconds(wantSend ? 50 : 0))
                }
                guard let engine else { return }
                do {
                    if wantFetch {
                        wantFetch = false
                        try await engine.run {
                            try await engine.performFetch(.init(reason: .scheduled, options: .init()))
                        }
                    }
                    if wantSend {
                        wantSend = false
                        try await engine.run {
                            try await engine.performSend(.init(reason: .scheduled, options: .init()))
                        }
                    }
                    failures = 0
                } catch let error as SyncError where error.code.isTransient {
                    failures += 1
                    wantSend =
                        !engine.state.pendingRecordZoneChanges.isEmpty
                        || !engine.state.pendingDatabaseChanges.isEmpty
                    wantFetch = true
                    let backoff = min(30, 0.25 * pow(2, Double(min(failures, 8))))
                    let wait = max(Double.random(in: 0...backoff), error.retryAfter ?? 0)
                    engine.logger.debug(
                        "automatic sync will retry", metadata: ["error": "\(error)", "wait": "\(wait)"])
                    try? await Task.sleep(for: .seconds(wait))
                } catch {
                    engine.logger.debug("automatic sync failed", metadata: ["error": "\(error)"])
                }
            }
        }
        let database = engine.database
        var tasks = [loop]
        if case .store(let store) = database.credentials {
            // A sign-in, sign-out or switch: check the account, sync, and listen as the new user.
            let changes = store.changes()
            tasks.append(
                Task { [weak self] in
                    for await _ in changes {
                        guard let self else { return }
                        self.serverChangesArrived()
                        self.localChangesArrived()
                        self.startListening(database)
                    }
                })
        }
        self.tasks.withLock { $0 = tasks }
        startListening(database)
    }

    /// (Re)starts the task that keeps the push socket open, reconnecting with backoff.
    private func startListening(_ database: Database) {
        let listener = Task { [weak self] in
            var failures = 0
            while !Task.isCancelled {
                guard let self else { return }
                do {
                    try await self.listen(database)
                    failures = 0
                } catch {
                    failures += 1
                }
                self.pushConnected.withLock { $0 = false }
                try? await Task.sleep(for: .seconds(min(30, 0.5 * pow(2, Double(min(failures, 6))))))
            }
        }
        pushListener.withLock { current in
            current?.cancel()
            current = listener
        }
    }

    /// Holds the push socket open; every message means "fetch".
    private func listen(_ database: Database) async throws {
        guard let token = database.credentials.currentToken else {
            // Signed out: a credential store's change restarts this listener.
            try await Task.sleep(for: .seconds(3600))
            return
        }
        var base = database.serverURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let url =
            base.replacingOccurrences(of: "http://", with: "ws://").replacingOccurrences(of: "https://", with: "wss://")
            + "/v1/push" + (database.deviceID.map { "?device=\($0)" } ?? "")
        var logger = Logger(label: "sync-engine-push")
        logger.logLevel = .critical
        try await WebSocketClient.connect(
            url: url, configuration: .init(additionalHeaders: [.authorization: "Bearer \(token)"]), logger: logger
        ) { inbound, _, _ in
            for try await message in inbound.messages(maxSize: 1 << 16) {
                guard case .text(let text) = message,
                    let push = try? JSONDecoder().decode(PushMessage.self, from: Data(text.utf8))
                else { continue }
                if push.event == .connected { self.pushConnected.withLock { $0 = true } }
                // Connected: changes may have happened while nobody listened. Changed: fetch.
                self.serverChangesArrived()
            }
        }
    }

    func stop() {
        tasks.withLock { tasks in
            for task in tasks { task.cancel() }
        }
        pushListener.withLock { $0?.cancel() }
        signals.finish()
    }
}
