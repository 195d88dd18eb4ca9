import Foundation
import SyncClient
import SyncCore
import Synchronization

/// Delivers events to the delegate one at a time, in order, from a single task; the engine's other
/// delegate calls go through it too, so the delegate is never called twice at once.
///
/// Operations await their events' handling; state updates caused by the app between operations
/// are coalesced into one `stateUpdate` and delivered in turn.
final class EventQueue: Sendable {
    private struct Item: Sendable {
        let event: SyncEngine.Event?  // nil: a coalesced stateUpdate, or `call`
        var call: (@Sendable () async -> Void)? = nil
        let handled: CheckedContinuation<Void, Never>?
    }

    /// Set while a delegate call runs, so that re-entrant sync calls can be refused.
    @TaskLocal static var deliveringFor: ObjectIdentifier?

    /// Whether a coalesced `stateUpdate` waits to be delivered.
    private final class PendingFlag: Sendable {
        let value = Mutex(false)
    }

    private let continuation: AsyncStream<Item>.Continuation
    private let pending = PendingFlag()
    private let task: Task<Void, Never>

    init(
        deliver: @escaping @Sendable (SyncEngine.Event) async -> Void,
        stateSerialization: @escaping @Sendable () -> SyncEngine.State.Serialization, owner: ObjectIdentifier
    ) {
        let (stream, continuation) = AsyncStream.makeStream(of: Item.self)
        self.continuation = continuation
        let pending = self.pending
        task = Task {
            for await item in stream {
                if let call = item.call {
                    await EventQueue.$deliveringFor.withValue(owner) { await call() }
                    item.handled?.resume()
                    continue
                }
                let event: SyncEngine.Event
                if let itemEvent = item.event {
                    event = itemEvent
                } else if pending.value.withLock({ flag in
                    defer { flag = false }
                    return flag
                }) {
                    event = .stateUpdate(.init(stateSerialization: stateSerialization()))
                } else {
                    // Coalesced into an update already delivered.
                    item.handled?.resume()
                    continue
                }
                await EventQueue.$deliveringFor.withValue(owner) { await deliver(event) }
                item.handled?.resume()
            }
        }
    }

    /// Delivers an event and returns once the delegate handled it.
    func deliver(_ event: SyncEngine.Event) async {
        await withCheckedContinuation { handled in
            continuation.yield(Item(event: event, handled: handled))
        }
    }

    /// Calls the delegate in turn with the events, and returns what it answered.
    func call<Answer: Sendable>(_ body: @escaping @Sendable () async -> Answer) async -> Answer {
        let answer = Answered<Answer>()
        await withCheckedContinuation { handled in
            continuation.yield(Item(event: nil, call: { answer.set(await body()) }, handled: handled))
        }
        return answer.value.withLock { $0! }
    }

    private final class Answered<Answer: Sendable>: Sendable {
        let value = Mutex<Answer?>(nil)
        func set(_ answer: Answer) { value.withLock { $0 = answer } }
    }

    /// Delivers a `stateUpdate` with the state as it is when its turn comes, and waits for it.
    func deliverStateUpdate() async {
        pending.value.withLock { $0 = true }
        await withCheckedContinuation { handled in
            continuation.yield(Item(event: nil, handled: handled))
        }
    }

    /// Schedules a coalesced `stateUpdate` without waiting.
    func scheduleStateUpdate() {
        let alreadyPending = pending.value.withLock { flag in
            defer { flag = true }
            return flag
        }
        if !alreadyPending { continuation.yield(Item(event: nil, handled: nil)) }
    }

    func finish() {
        continuation.finish()
    }

    deinit {
        continuation.finish()
    }
}

/// A first-come, first-served lock for async code: one sync operation at a time per engine.
actor OperationLock {
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// How many callers wait for the lock.
    var waitingCount: Int { waiters.count }

    func lock() async {
        if !locked {
            locked = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func unlock() {
        if waiters.isEmpty {
            locked = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
