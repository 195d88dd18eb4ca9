import Testing

@testable import sync_bench

/// `sync-bench soak`'s push timing: a listening socket's n-th push is its account's n-th write that
/// changed something, matched only once the writes before it are answered.
@Suite("sync-bench soak: push log")
struct SoakPushLogTests {
    @Test("a push that arrives before its write's answer is timed once the answer comes")
    func pushBeforeAnswer() {
        let log = SoakPushLog(accounts: 1)
        let listener = log.addListener(account: 0)
        let write = log.writeSent(account: 0)
        log.pushArrived(listener)
        #expect(log.takeLatencies().pushes.isEmpty, "not matched while the write is unanswered")
        log.answered(account: 0, write: write, changed: true)
        let latencies = log.takeLatencies()
        #expect(latencies.pushes.count == 1)
        #expect(latencies.writes.count == 1)
        #expect(latencies.pushes.allSatisfy { $0 >= 0 })
        #expect(log.takeLatencies().pushes.isEmpty, "each push is timed once")
        #expect(log.pushCounts == (expected: 1, received: 1))
    }

    @Test("writes that changed nothing or got no answer are passed over; an unanswered one holds those after it")
    func unchangedAndWaitingWrites() {
        let log = SoakPushLog(accounts: 2)
        let first = log.addListener(account: 0)
        let other = log.addListener(account: 1)
        let conflict = log.writeSent(account: 0)
        let waiting = log.writeSent(account: 0)
        let saved = log.writeSent(account: 0)
        log.answered(account: 0, write: conflict, changed: false)
        log.answered(account: 0, write: saved, changed: true)
        log.pushArrived(first)
        #expect(log.takeLatencies().pushes.isEmpty, "the write still on its way may be the one that pushed")
        #expect(!log.allAnswered)
        log.answered(account: 0, write: waiting, changed: false)
        #expect(log.takeLatencies().pushes.count == 1)
        #expect(log.allAnswered)
        // The other account's socket heard nothing and expected nothing.
        #expect(log.pushCounts == (expected: 1, received: 1))
        log.pushArrived(other)
        #expect(log.takeLatencies().pushes.isEmpty, "a push without a write is not timed")
        #expect(log.writeCounts == (sent: 3, changed: 1))
    }

    @Test("a write answered twice keeps its first answer")
    func firstAnswerHolds() {
        let log = SoakPushLog(accounts: 1)
        let listener = log.addListener(account: 0)
        let write = log.writeSent(account: 0)
        log.answered(account: 0, write: write, changed: true)
        // The end of a send answers whatever it did not hear about with "unchanged".
        log.answered(account: 0, write: write, changed: false)
        log.pushArrived(listener)
        #expect(log.takeLatencies().pushes.count == 1)
    }
}
