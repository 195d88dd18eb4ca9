import Foundation
import SyncCore
import SyncTesting
import Synchronization
import Testing

@testable import SyncServer

/// bcrypt runs a few at a time with a bounded queue, so a flood of sign-ins cannot take every core.
/// The work is held at a semaphore the test opens: nothing here depends on timing.
@Suite("Password hashing queue")
struct PasswordHashingQueueTests {
    private final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    @Test("one hash at a time here; one may wait; more are refused at once with serviceUnavailable")
    func boundedQueue() async throws {
        let queue = PasswordHashingQueue(.init(concurrency: 1, queueLimit: 1))
        let gate = DispatchSemaphore(value: 0)
        let started = Flag()
        let first = Task {
            try await queue.run {
                started.set()
                gate.wait()
                return 1
            }
        }
        try await waitUntil("the first hash runs") { started.isSet }

        let second = Task { try await queue.run { 2 } }
        try await waitUntil("the second waits for the slot") { queue.waitingCount == 1 }
        let refused = await syncError { _ = try await queue.run { 3 } }
        #expect(refused?.code == .serviceUnavailable)
        #expect(refused?.retryAfter != nil)

        // A waiter whose client went away leaves the queue, and makes room.
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        #expect(queue.waitingCount == 0)
        let fourth = Task { try await queue.run { 4 } }
        try await waitUntil("the fourth waits for the slot") { queue.waitingCount == 1 }

        gate.signal()
        #expect(try await first.value == 1)
        #expect(try await fourth.value == 4)
        #expect(queue.waitingCount == 0)
        #expect(try await queue.run { 5 } == 5)
    }
}
