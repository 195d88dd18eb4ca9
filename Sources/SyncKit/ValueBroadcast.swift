import Synchronization

/// The current value of something that changes (a scheduler's status, a device's status) and its
/// subscribers: each new subscriber gets the current value first, then every change, in the order the
/// changes were made.
///
/// A class with a lock rather than actor state, so that subscribing needs no `await` and no change
/// slips between reading the current value and subscribing.
package final class ValueBroadcast<Value: Sendable & Equatable>: Sendable {
    private struct State {
        var current: Value
        var nextID = 0
        var subscribers: [Int: AsyncStream<Value>.Continuation] = [:]
    }

    private let state: Mutex<State>
    private let buffered: Int

    /// - Parameter bufferingNewest: how many unread values a slow subscriber keeps: it misses the oldest
    ///   beyond that, never the latest.
    package init(_ initial: Value, bufferingNewest buffered: Int) {
        state = Mutex(State(current: initial))
        self.buffered = buffered
    }

    deinit { finish() }

    package var current: Value {
        state.withLock { $0.current }
    }

    /// Publishes `value` unless it equals the current one.
    package func publish(_ value: Value) {
        update { $0 = value }
    }

    /// Applies `change` to the current value; subscribers hear of the result when it differs.
    package func update(_ change: (inout Value) -> Void) {
        // Yielding under the lock keeps every subscriber's order the order of the changes.
        state.withLock { state in
            var value = state.current
            change(&value)
            guard value != state.current else { return }
            state.current = value
            for subscriber in state.subscribers.values { subscriber.yield(value) }
        }
    }

    /// A new stream of values that starts with the current one, until the stream is dropped or
    /// ``finish()`` ends it.
    package func subscribe() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(buffered))
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        state.withLock { state in
            state.subscribers[id] = continuation
            continuation.yield(state.current)
        }
        return stream
    }

    /// Ends every subscriber's stream.
    package func finish() {
        for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber.finish() }
    }
}
