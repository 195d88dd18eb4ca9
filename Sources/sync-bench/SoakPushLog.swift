import Synchronization

/// The soak's push timing: the writes each account's devices sent, in the order they sent them, and
/// the pushes each listening socket heard, matched in order once the writes are answered.
///
/// A push carries no more than "your private database changed", so it cannot name its write. The
/// server sends exactly one push per write that changed something, to every socket of the account
/// but the writer's, and a listening socket writes nothing: so a socket's n-th push is for its
/// account's n-th write that changed something. A write is counted from the moment its device handed
/// its batch to the engine, just before the request goes out; it is matched only once its answer
/// says whether it changed anything (an answer can come after the push it caused), and writes that
/// changed nothing (all conflicts) or got no answer are passed over. Two writes of one account in
/// flight at once may be matched the wrong way round: each latency is then off by less than their gap.
final class SoakPushLog: Sendable {
    private enum Outcome {
        case waiting, changed, unchanged
    }

    private struct Write {
        var sentAt: ContinuousClock.Instant
        var outcome: Outcome
    }

    private struct Listener {
        var account: Int
        var pushes: [ContinuousClock.Instant] = []
        var matched = 0
        var connected = false
    }

    private struct Storage {
        var writes: [[Write]]
        var listeners: [Listener] = []
        /// Round trips since the last ``takeLatencies()``.
        var roundTrips: [Double] = []
    }

    private let storage: Mutex<Storage>

    init(accounts: Int) {
        storage = Mutex(Storage(writes: Array(repeating: [], count: accounts)))
    }

    /// A new listening socket of `account`; returns its number.
    func addListener(account: Int) -> Int {
        storage.withLock { storage in
            storage.listeners.append(Listener(account: account))
            return storage.listeners.count - 1
        }
    }

    /// The server confirmed the socket (`connected`), or it closed.
    func setConnected(_ listener: Int, _ connected: Bool) {
        storage.withLock { $0.listeners[listener].connected = connected }
    }

    var connectedListeners: Int { storage.withLock { $0.listeners.count { $0.connected } } }

    /// A device of `account` is about to send a batch; returns the write's number, for ``answered``.
    func writeSent(account: Int) -> Int {
        storage.withLock { storage in
            storage.writes[account].append(Write(sentAt: .now, outcome: .waiting))
            return storage.writes[account].count - 1
        }
    }

    /// The server answered write `write`: whether it saved or deleted anything (then it pushed).
    /// Writes that never got an answer are answered `changed: false` when their send ends.
    func answered(account: Int, write: Int, changed: Bool) {
        storage.withLock { storage in
            guard storage.writes[account][write].outcome == .waiting else { return }
            storage.writes[account][write].outcome = changed ? .changed : .unchanged
            if changed { storage.roundTrips.append((.now - storage.writes[account][write].sentAt).inSeconds * 1000) }
        }
    }

    func pushArrived(_ listener: Int) {
        let now = ContinuousClock.now
        storage.withLock { $0.listeners[listener].pushes.append(now) }
    }

    /// Matches every push that can be matched now; returns the push latencies (ms) found since the last
    /// call, and the writes' round trips (batch handed over to answer handled, ms) since then: a write's
    /// push cannot come sooner than its commit, which is most of its round trip.
    func takeLatencies() -> (pushes: [Double], writes: [Double]) {
        storage.withLock { storage in
            let settled = storage.writes.map(Self.settledWrites)
            var latencies: [Double] = []
            for index in storage.listeners.indices {
                let listener = storage.listeners[index]
                let writes = settled[listener.account]
                let end = min(listener.pushes.count, writes.count)
                guard listener.matched < end else { continue }
                for position in listener.matched..<end {
                    latencies.append((listener.pushes[position] - writes[position]).inSeconds * 1000)
                }
                storage.listeners[index].matched = end
            }
            defer { storage.roundTrips.removeAll(keepingCapacity: true) }
            return (latencies, storage.roundTrips)
        }
    }

    /// When the writes that changed something were sent, up to the first write not answered yet.
    private static func settledWrites(_ writes: [Write]) -> [ContinuousClock.Instant] {
        var settled: [ContinuousClock.Instant] = []
        for write in writes {
            switch write.outcome {
            case .waiting: return settled
            case .changed: settled.append(write.sentAt)
            case .unchanged: continue
            }
        }
        return settled
    }

    /// Writes sent so far, and those that changed something.
    var writeCounts: (sent: Int, changed: Int) {
        storage.withLock { storage in
            (
                storage.writes.reduce(0) { $0 + $1.count },
                storage.writes.reduce(0) { $0 + $1.count { $0.outcome == .changed } }
            )
        }
    }

    /// Pushes the listening sockets should have heard (one per write of their account that changed
    /// something) and those they heard; equal once every push has arrived.
    var pushCounts: (expected: Int, received: Int) {
        storage.withLock { storage in
            let changed = storage.writes.map { $0.count { $0.outcome == .changed } }
            return storage.listeners.reduce((0, 0)) { counts, listener in
                (counts.0 + changed[listener.account], counts.1 + listener.pushes.count)
            }
        }
    }

    /// Whether every write has been answered.
    var allAnswered: Bool {
        storage.withLock { $0.writes.allSatisfy { $0.allSatisfy { $0.outcome != .waiting } } }
    }
}
