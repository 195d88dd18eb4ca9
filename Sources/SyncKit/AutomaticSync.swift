import Foundation
import SyncClient
import SyncCore
import Synchronization

/// What an engine with `automaticallySync` runs besides itself: the ``SyncScheduler`` that decides
/// when to send and fetch, and the push socket that tells it the server changed.
final class AutomaticSync: Sendable {
    let scheduler: SyncScheduler
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let pushListener = Mutex<Task<Void, Never>?>(nil)
    /// Whether the push socket is connected, for status displays and tests.
    let pushConnected = Mutex(false)

    init(engine: SyncEngine, policy: SyncScheduler.Policy, probes: [any ConditionProbe]) {
        scheduler = SyncScheduler(policy: policy, probes: probes) { [weak engine] work in
            guard let engine else { return false }
            // Nothing to send, or no account to send or fetch as, reaches no server: not a success that would
            // hide a failure or move the last sync on.
            let reached = ServerReached()
            switch work {
            case .fetch:
                try await engine.run {
                    reached.record(try await engine.performFetch(.init(reason: .scheduled, options: .init())))
                }
            case .send:
                guard engine.state.storage.withLock({ $0.hasChangesToSend }) else { return false }
                try await engine.run {
                    reached.record(try await engine.performSend(.init(reason: .scheduled, options: .init())))
                }
            }
            return reached.server
        }
    }

    func localChangesArrived() {
        let scheduler = self.scheduler
        Task { await scheduler.localChangesArrived() }
    }

    func start(engine: SyncEngine) {
        let scheduler = self.scheduler
        let database = engine.database
        var tasks = [Task { await scheduler.start() }]
        if case .store(let store) = database.credentials {
            // A sign-in, sign-out or switch: check the account, sync, and listen as the new user.
            let changes = store.changes()
            tasks.append(
                Task { [weak self] in
                    for await _ in changes {
                        guard let self else { return }
                        await self.scheduler.accountChanged()
                        self.startListening(database)
                    }
                })
        }
        self.tasks.withLock { $0 = tasks }
        startListening(database)
    }

    /// (Re)starts the task that keeps the push socket open, reconnecting with backoff.
    private func startListening(_ database: Database) {
        pushListener.withLock { $0?.cancel() }
        // The listener just cancelled leaves the status to its successor: a socket it had open is gone.
        let wasConnected = pushConnected.withLock { connected in
            defer { connected = false }
            return connected
        }
        let listener = Task { [weak self] in
            if wasConnected { await self?.scheduler.pushConnectionChanged(connected: false) }
            var failures = 0
            while !Task.isCancelled {
                guard let self else { return }
                do {
                    try await self.listen(database)
                    failures = 0
                } catch {
                    failures += 1
                }
                // Replaced by a new listener (reconnect, account change): the new one owns the status.
                if Task.isCancelled { return }
                if self.pushConnected.withLock({ connected in
                    defer { connected = false }
                    return connected
                }) {
                    await self.scheduler.pushConnectionChanged(connected: false)
                }
                try? await Task.sleep(for: .seconds(min(30, 0.5 * pow(2, Double(min(failures, 6))))))
            }
        }
        pushListener.withLock { current in
            current?.cancel()
            current = listener
        }
    }

    /// Reconnects the push socket now, unless it is connected: the app learned that the server is back
    /// (it restarted it), so waiting out the reconnection backoff would only delay what it sends and hears.
    func reconnect(_ database: Database) {
        guard !pushConnected.withLock({ $0 }) else { return }
        startListening(database)
    }

    /// Holds the push socket open; every message means "fetch".
    private func listen(_ database: Database) async throws {
        guard let token = try await database.credentials.token() else {
            // Signed out: a credential store's change restarts this listener.
            try await Task.sleep(for: .seconds(3600))
            return
        }
        try await PushSocket.listen(serverURL: database.serverURL, token: token, deviceID: database.deviceID) { push in
            if push.event == .connected, !Task.isCancelled {
                self.pushConnected.withLock { $0 = true }
                await self.scheduler.pushConnectionChanged(connected: true)
            }
            // Connected: changes may have happened while nobody listened. Changed: fetch.
            await self.scheduler.pushArrived()
        }
    }

    func stop() async {
        for task in tasks.withLock({ $0 }) { task.cancel() }
        pushListener.withLock { $0?.cancel() }
        await scheduler.stop()
    }
}
