import Synchronization

/// The device's current ``DeviceStatus`` and its subscribers: each new subscriber gets the current status
/// first, then every change. It belongs to the device, not to an engine, so subscribers keep their stream
/// when the device replaces its engines.
final class DeviceStatusBroadcast: Sendable {
    private struct State {
        var status = DeviceStatus()
        var subscribers: [Int: AsyncStream<DeviceStatus>.Continuation] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    var current: DeviceStatus { state.withLock { $0.status } }

    /// A stream of the status: the current one, then each change, until the stream is dropped.
    func updates() -> AsyncStream<DeviceStatus> {
        // A status replaces the one before: a slow reader needs only the newest.
        let (stream, continuation) = AsyncStream.makeStream(of: DeviceStatus.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            continuation.yield(state.status)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Applies `change`; subscribers hear of the result when it differs from what they have.
    func update(_ change: (inout DeviceStatus) -> Void) {
        state.withLock { state in
            var status = state.status
            change(&status)
            guard status != state.status else { return }
            state.status = status
            // Yielded under the lock, so that every subscriber sees the changes in the order they were made.
            for subscriber in state.subscribers.values { subscriber.yield(status) }
        }
    }

    /// Ends every subscriber's stream (the device is going away).
    func finish() {
        for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber.finish() }
    }
}
