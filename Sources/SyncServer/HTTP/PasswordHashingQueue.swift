import Foundation
import NIOPosix
import SyncCore
import Synchronization

/// Runs password hashing (bcrypt) a few at a time, off the event loops, with a bounded queue.
///
/// bcrypt is slow on purpose; without a bound, a flood of sign-ins would take every core and
/// starve the requests of signed-in users. A request that finds the queue full answers
/// `503 serviceUnavailable` with `retryAfter` at once instead of waiting (see
/// ``SyncServerConfiguration/PasswordHashing``).
final class PasswordHashingQueue: Sendable {
    private enum Waiter {
        /// Has a place in the queue; its task is about to suspend.
        case reserved
        case suspended(CheckedContinuation<Void, any Error>)
    }

    private struct State {
        var running = 0
        var nextID: UInt64 = 0
        var order: [UInt64] = []
        var waiters: [UInt64: Waiter] = [:]
        /// Reserved waiters that were handed a slot before they suspended.
        var granted: Set<UInt64> = []
    }

    private let limits: SyncServerConfiguration.PasswordHashing
    private let state = Mutex(State())

    init(_ limits: SyncServerConfiguration.PasswordHashing) {
        self.limits = limits
    }

    /// How many requests wait for a slot now.
    var waitingCount: Int { state.withLock { $0.order.count } }

    /// Runs `work` once a slot is free; throws `serviceUnavailable` when too many are waiting already.
    /// - Parameters:
    ///   - check: Runs once the slot is taken, before `work`; what it throws ends the request
    ///     without hashing (the world may have changed while it waited).
    ///   - work: The hashing, run on a thread pool.
    func run<T: Sendable>(afterWaiting check: () throws -> Void = {}, _ work: @escaping @Sendable () -> T)
        async throws -> T
    {
        try await acquire()
        defer { release() }
        try check()
        return try await NIOThreadPool.singleton.runIfActive(work)
    }

    private func acquire() async throws {
        let concurrency = max(1, limits.concurrency)
        let queueLimit = max(0, limits.queueLimit)
        let id: UInt64? = try state.withLock { state in
            if state.running < concurrency {
                state.running += 1
                return nil
            }
            guard state.order.count < queueLimit else {
                throw SyncError(
                    .serviceUnavailable, "the server is busy checking passwords; retry in a second", retryAfter: 1)
            }
            state.nextID += 1
            state.order.append(state.nextID)
            state.waiters[state.nextID] = .reserved
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome {
                    case go
                    case wait
                    case cancelled
                }
                let outcome = state.withLock { state -> Outcome in
                    if state.granted.remove(id) != nil { return .go }
                    guard state.waiters[id] != nil else { return .cancelled }
                    state.waiters[id] = .suspended(continuation)
                    return .wait
                }
                switch outcome {
                case .go: continuation.resume()
                case .wait: break
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            // A waiter that already holds a slot goes on (and releases it); one still queued leaves.
            let waiter = state.withLock { state -> Waiter? in
                guard let waiter = state.waiters.removeValue(forKey: id) else { return nil }
                state.order.removeAll { $0 == id }
                return waiter
            }
            if case .suspended(let continuation) = waiter {
                continuation.resume(throwing: CancellationError())
            }
        }
    }

    /// Hands the slot to the first waiter, or frees it.
    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            while !state.order.isEmpty {
                let id = state.order.removeFirst()
                switch state.waiters.removeValue(forKey: id) {
                case .suspended(let continuation):
                    return continuation
                case .reserved:
                    state.granted.insert(id)
                    return nil
                case nil:
                    continue
                }
            }
            state.running -= 1
            return nil
        }
        next?.resume()
    }
}
