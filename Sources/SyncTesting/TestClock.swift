import Synchronization

/// A clock that moves only when a test tells it to, so that code generic over `Clock` runs
/// deterministically and no test ever waits on real time.
///
/// Sleepers suspend until ``advance(by:)`` or ``advance(to:)`` moves ``now`` to or past their
/// deadline; they are then resumed in deadline order. Cancelling a sleeping task resumes it at
/// once with `CancellationError`, as `Task.sleep` does.
///
/// Advancing resumes sleepers but cannot know when the woken tasks have done their work. A test
/// that needs to know waits for the code under test to park again, with ``waitForSleepers(count:)``:
///
/// ```swift
/// let clock = TestClock()
/// let scheduler = SyncScheduler(clock: clock, …)
/// await scheduler.localChangesArrived()
/// await clock.waitForSleepers(count: 1)  // the scheduler waits out its debounce
/// await clock.advance(by: .milliseconds(500))
/// await clock.waitForSleepers(count: 1)  // it has sent, and waits again
/// ```
public final class TestClock: Clock, Sendable {
    /// A point in test time: how far the clock is from where it started.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// The time since the clock's origin.
        public var offset: Duration

        /// Creates the instant `offset` after the clock's origin.
        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        public var description: String { "TestClock.Instant(\(offset))" }
    }

    private enum Entry {
        /// Allocated, not yet suspended.
        case starting(deadline: Instant)
        /// Cancelled before it could suspend: it throws as soon as it tries.
        case cancelled
        case sleeping(deadline: Instant, continuation: CheckedContinuation<Void, any Error>)
    }

    private struct State {
        var now: Instant
        var nextID: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        var sleeperCount: Int {
            entries.values.count(where: { if case .sleeping = $0 { true } else { false } })
        }

        /// Removes and returns the waiters whose count is reached.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            let count = sleeperCount
            let ready = waiters.filter { $0.count <= count }.map(\.continuation)
            waiters.removeAll { $0.count <= count }
            return ready
        }
    }

    private let state: Mutex<State>

    /// Creates a clock that reads `now` until it is advanced.
    public init(now: Instant = Instant(offset: .zero)) {
        state = Mutex(State(now: now))
    }

    public var now: Instant {
        state.withLock { $0.now }
    }

    public var minimumResolution: Duration { .zero }

    /// How many tasks are suspended in ``sleep(until:tolerance:)`` right now.
    public var sleeperCount: Int {
        state.withLock { $0.sleeperCount }
    }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state in
            state.nextID += 1
            state.entries[state.nextID] = .starting(deadline: deadline)
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome {
                    case resume
                    case cancel
                    case sleep([CheckedContinuation<Void, Never>])
                }
                let outcome = state.withLock { state -> Outcome in
                    if case .cancelled = state.entries[id] {
                        state.entries[id] = nil
                        return .cancel
                    }
                    if deadline <= state.now {
                        state.entries[id] = nil
                        return .resume
                    }
                    state.entries[id] = .sleeping(deadline: deadline, continuation: continuation)
                    return .sleep(state.satisfiedWaiters())
                }
                switch outcome {
                case .resume: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                case .sleep(let waiters): for waiter in waiters { waiter.resume() }
                }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                switch state.entries[id] {
                case .starting:
                    state.entries[id] = .cancelled
                    return nil
                case .sleeping(_, let continuation):
                    state.entries[id] = nil
                    return continuation
                case .cancelled, nil:
                    return nil
                }
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration` and resumes every sleeper whose deadline has come.
    public func advance(by duration: Duration) async {
        await advance(to: now.advanced(by: duration))
    }

    /// Moves the clock to `instant` (never backwards) and resumes every sleeper whose deadline has
    /// come, earliest deadline first. Time jumps: a woken task reads the new ``now``, not its deadline.
    public func advance(to instant: Instant) async {
        let due = state.withLock { state in
            state.now = max(state.now, instant)
            let now = state.now
            var due: [(deadline: Instant, id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
            for (id, entry) in state.entries {
                if case .sleeping(let deadline, let continuation) = entry, deadline <= now {
                    due.append((deadline, id, continuation))
                }
            }
            for sleeper in due { state.entries[sleeper.id] = nil }
            return due.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
        }
        for sleeper in due {
            sleeper.continuation.resume()
        }
        // Give the woken tasks a chance to run before the caller goes on; tests that need
        // certainty wait with `waitForSleepers(count:)`.
        for _ in 0..<10 {
            await Task.yield()
        }
    }

    /// Returns once at least `count` tasks are suspended in ``sleep(until:tolerance:)``: the way a
    /// test waits until the code under test has parked before it advances the clock.
    public func waitForSleepers(count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.sleeperCount >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
