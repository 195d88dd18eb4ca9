import Foundation
import SyncCore
import SyncKit
import SyncTesting
import Synchronization
import Testing

// The time limit only catches a hang (a scheduler that never parks again); the tests run on a test clock,
// but a busy machine running the whole suite in parallel may take a while to get to each step.
@Suite("Sync scheduler", .timeLimit(.minutes(10)))
struct SyncSchedulerTests {
    typealias Decision = SyncScheduler.Decision

    // MARK: Triggers

    @Test("a local change is sent 0.5 s after it was made, not before")
    func debounce() async {
        await withScheduler { h in
            await h.scheduler.localChangesArrived()
            await h.settle()
            #expect(await h.decision == .waiting(.send, in: .milliseconds(500), trigger: .localChanges))
            #expect(await h.decision.description == "sending in 0.5 s (debounce)")

            await h.advance(by: .milliseconds(499))
            #expect(h.engine.calls.isEmpty)
            await h.advance(by: .milliseconds(1))
            #expect(h.engine.calls == [Call(.send, at: .milliseconds(500))])
            #expect(await h.decision == .idle)
        }
    }

    @Test("editing every 0.3 s for 20 s: the first send goes out 5 s after the first edit, none waits longer")
    func maximumDelayUnderContinuousEditing() async {
        await withScheduler { h in
            var edits: [Duration] = []
            for step in 0..<67 {
                edits.append(.milliseconds(300) * step)
                await h.scheduler.localChangesArrived()
                for _ in 0..<3 { await h.advance(by: .milliseconds(100)) }
            }
            for _ in 0..<10 { await h.advance(by: .milliseconds(100)) }

            let sends = h.engine.calls.filter { $0.work == .send }.map(\.at)
            #expect(sends.first == .seconds(5), "\(sends)")
            for edit in edits {
                let sent = sends.first { $0 >= edit }
                #expect(sent.map { $0 - edit <= .seconds(5) } == true, "the edit at \(edit) waited too long: \(sends)")
            }
            #expect(sends.count <= 5, "a stream of edits goes out in few sends, not one per edit: \(sends)")
        }
    }

    @Test("a push is fetched at once, without a debounce")
    func pushFetchesPromptly() async {
        await withScheduler { h in
            await h.advance(by: .seconds(3))
            await h.scheduler.pushArrived()
            await h.settle()
            #expect(h.engine.calls == [Call(.fetch, at: .seconds(3))])
        }
    }

    @Test("pushes that arrive during a send lead to exactly one fetch after it")
    func pushDuringSend() async {
        await withScheduler { h in
            h.engine.duration.withLock { $0 = .seconds(1) }
            await h.scheduler.localChangesArrived()
            await h.settle()
            await h.advance(by: .milliseconds(500))
            #expect(await h.decision == .running(.send, trigger: .localChanges))

            for _ in 0..<3 { await h.scheduler.pushArrived() }
            await h.settle()
            #expect(await h.decision == .running(.send, trigger: .localChanges), "the send is not interrupted")
            await h.advance(by: .seconds(1))
            #expect(await h.decision == .running(.fetch, trigger: .push))
            await h.advance(by: .seconds(1))
            await h.advance(by: .seconds(60))

            #expect(h.engine.calls == [Call(.send, at: .milliseconds(500)), Call(.fetch, at: .milliseconds(1500))])
        }
    }

    @Test("triggers from many tasks at once never run two sends or fetches together")
    func neverTwoAtOnce() async {
        await withScheduler { h in
            h.engine.duration.withLock { $0 = .milliseconds(800) }
            let scheduler = h.scheduler
            for _ in 0..<10 {
                await withTaskGroup(of: Void.self) { group in
                    for task in 0..<8 {
                        group.addTask {
                            if task.isMultiple(of: 2) {
                                await scheduler.pushArrived()
                            } else {
                                await scheduler.localChangesArrived()
                            }
                        }
                    }
                }
                await h.settle()
                await h.advance(by: .milliseconds(300))
            }
            for _ in 0..<20 { await h.advance(by: .seconds(1)) }

            #expect(h.engine.mostAtOnce.withLock { $0 } == 1)
            #expect(h.engine.calls.contains { $0.work == .fetch } && h.engine.calls.contains { $0.work == .send })
            #expect(await h.decision == .idle, "everything asked for has run")
        }
    }

    @Test("while the push socket is down, fetch every 30 s; while it is up, never poll")
    func pollOnlyWhilePushIsDown() async {
        await withScheduler(pushConnected: false) { h in
            #expect(await h.decision.description == "fetching in 30 s (poll)")
            await h.advance(by: .seconds(30))
            await h.advance(by: .seconds(30))
            #expect(h.engine.calls == [Call(.fetch, at: .seconds(30)), Call(.fetch, at: .seconds(60))])
            #expect(await h.decision == .waiting(.fetch, in: .seconds(30), trigger: .poll))

            // Connected: one fetch at once catches up with what changed while no push could arrive.
            await h.scheduler.pushConnectionChanged(connected: true)
            await h.settle()
            #expect(await h.decision == .idle)
            #expect(
                h.engine.calls == [
                    Call(.fetch, at: .seconds(30)), Call(.fetch, at: .seconds(60)), Call(.fetch, at: .seconds(60)),
                ])
            for _ in 0..<3 { await h.advance(by: .seconds(30)) }
            #expect(h.engine.calls.count == 3, "no polling while pushes arrive")

            // The last fetch is 90 s old: the first poll is due at once.
            await h.scheduler.pushConnectionChanged(connected: false)
            await h.settle()
            await h.advance(by: .seconds(30))
            #expect(
                h.engine.calls.map(\.at) == [.seconds(30), .seconds(60), .seconds(60), .seconds(150), .seconds(180)])
        }
    }

    // MARK: Failures

    @Test("repeated network failures back off exponentially up to the cap, each wait within its window")
    func backoffSequence() async {
        let fractions = [0.9, 0.2, 0.55, 0.75, 0.35, 0.95, 0.6, 0.1, 0.85, 0.45, 0.7, 0.3]
        await withScheduler(jitter: fractions) { h in
            h.engine.failAlways(SyncError(.networkFailure, "connection refused"))
            await h.scheduler.localChangesArrived()
            await h.settle()
            await h.advance(by: .milliseconds(500))

            var waits: [Duration] = []
            for attempt in 1...fractions.count {
                guard case .deferred(.offline(attempt), let retryIn?) = await h.decision else {
                    Issue.record("attempt \(attempt): \(await h.decision)")
                    return
                }
                waits.append(retryIn)
                await h.advance(by: retryIn)
            }
            for (index, wait) in waits.enumerated() {
                let window = min(Duration.seconds(300), .seconds(1) * (1 << index))
                #expect(wait >= .zero && wait <= window, "wait \(index + 1): \(wait) outside 0…\(window)")
                #expect(abs(seconds(wait) - fractions[index] * seconds(window)) < 1e-6, "full jitter of the window")
            }
            let sends = h.engine.calls.map(\.at)
            #expect(zip(sends, sends.dropFirst()).map { $1 - $0 } == waits, "each retry came when it said")
        }
    }

    @Test("with no jitter, backoff windows double from 1 s and stop at the 5 min cap")
    func backoffCap() async {
        await withScheduler(jitter: [1]) { h in
            h.engine.failAlways(SyncError(.networkFailure, "connection refused"))
            await h.scheduler.pushArrived()
            await h.settle()
            var waits: [Duration] = []
            for _ in 0..<12 {
                guard case .deferred(_, let retryIn?) = await h.decision else { break }
                waits.append(retryIn)
                await h.advance(by: retryIn)
            }
            #expect(waits == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map { Duration.seconds($0) })
            #expect(await h.scheduler.status.consecutiveFailures == 13)
        }
    }

    @Test("a retry never comes before the server's retryAfter")
    func retryAfterRespected() async {
        await withScheduler(jitter: [0.1]) { h in
            h.engine.script([SyncError(.serviceUnavailable, "overloaded", retryAfter: 7)])
            await h.scheduler.pushArrived()
            await h.settle()
            #expect(await h.decision.description == "deferred: server busy — retry in 7 s (attempt 1)")
            await h.advance(by: .milliseconds(6_999))
            #expect(h.engine.calls.count == 1)
            await h.advance(by: .milliseconds(1))
            #expect(h.engine.calls == [Call(.fetch, at: .zero), Call(.fetch, at: .seconds(7))])
            #expect(await h.decision == .idle)
        }
    }

    @Test("rate limited shows the wall-clock time it lasts until, then retries then")
    func rateLimitedUntil() async {
        let noon = Calendar.current.date(from: DateComponents(year: 2025, month: 3, day: 14, hour: 12, minute: 3))!
        await withScheduler(now: noon, jitter: [0.5]) { h in
            h.engine.script([SyncError(.requestRateLimited, "slow down", retryAfter: 4)])
            await h.scheduler.pushArrived()
            await h.settle()
            #expect(await h.decision.description == "rate limited until 12:03:04")
            let failure = await h.scheduler.status.lastFailure
            #expect(failure?.code == .requestRateLimited && failure?.date == noon && failure?.work == .fetch)

            await h.advance(by: .seconds(4))
            #expect(h.engine.calls.map(\.at) == [.zero, .seconds(4)])
            #expect(await h.scheduler.status.lastSuccess == noon)
        }
    }

    @Test("offline, the push socket reconnecting runs the held work at once")
    func reconnectRunsDeferredWork() async {
        await withScheduler(pushConnected: false, jitter: [1]) { h in
            h.engine.script(Array(repeating: SyncError(.networkFailure, "unreachable"), count: 3))
            await h.scheduler.localChangesArrived()
            await h.settle()
            await h.advance(by: .milliseconds(500))
            await h.advance(by: .seconds(1))
            await h.advance(by: .seconds(2))
            #expect(await h.decision.description == "deferred: offline — retry in 4 s (attempt 3)")
            await h.scheduler.pushConnectionChanged(connected: true)
            await h.settle()

            #expect(h.engine.calls.map(\.at).last == .milliseconds(3_500), "ran at once, not after 4 s")
            let status = await h.scheduler.status
            #expect(status.decision == .idle)
            #expect(status.consecutiveFailures == 0 && status.pushConnected)
            #expect(status.lastFailure?.message == "networkFailure: unreachable")
        }
    }

    @Test("offline → online recovers by itself, with no trigger")
    func recoversWithoutHelp() async {
        await withScheduler(jitter: [1]) { h in
            h.engine.script(Array(repeating: SyncError(.networkFailure, "unreachable"), count: 4))
            await h.scheduler.localChangesArrived()
            await h.settle()
            await h.advance(by: .milliseconds(500))
            for _ in 0..<30 { await h.advance(by: .seconds(1)) }
            #expect(h.engine.calls.map(\.at) == [0.5, 1.5, 3.5, 7.5, 15.5].map { .seconds($0) })
            #expect(await h.decision == .idle)
            #expect(await h.scheduler.status.lastSuccess != nil)
        }
    }

    @Test("a failure that retrying cannot fix is recorded and not retried until asked again")
    func permanentFailureNotRetried() async {
        await withScheduler { h in
            h.engine.script([SyncError(.invalidArguments, "bad record")])
            await h.scheduler.localChangesArrived()
            await h.settle()
            await h.advance(by: .milliseconds(500))
            for _ in 0..<5 { await h.advance(by: .seconds(60)) }
            #expect(h.engine.calls.count == 1)
            let status = await h.scheduler.status
            #expect(status.decision == .idle && status.lastFailure?.code == .invalidArguments)
            await h.scheduler.localChangesArrived()
            await h.settle()
            await h.advance(by: .milliseconds(500))
            #expect(h.engine.calls.count == 2)
        }
    }

    @Test("a send with nothing to send is no success: a fetch's failure stays the status until work succeeds")
    func nothingToSendIsNoSuccess() async {
        await withScheduler { h in
            let before = await h.scheduler.status.lastSuccess
            h.engine.script([SyncError(.invalidArguments, "the server refused the fetch")])
            await h.scheduler.pushArrived()
            await h.settle()
            h.engine.idle.withLock { $0 = [.send] }
            await h.scheduler.localChangesArrived()
            await h.settle()
            await h.advance(by: .milliseconds(500))
            #expect(h.engine.calls.map(\.work) == [.fetch, .send], "the send ran, and found nothing to do")
            var status = await h.scheduler.status
            #expect(status.consecutiveFailures == 1 && status.lastFailure?.work == .fetch, "\(status)")
            #expect(status.lastSuccess == before, "no success was recorded")

            await h.scheduler.pushArrived()
            await h.settle()
            status = await h.scheduler.status
            #expect(status.consecutiveFailures == 0 && status.lastSuccessWork == .fetch, "a fetch that works ends it")
        }
    }

    @Test("a manual sync that succeeds ends an offline backoff without running anything itself")
    func manualSuccessEndsBackoff() async {
        await withScheduler(jitter: [1]) { h in
            h.engine.script(Array(repeating: SyncError(.networkFailure, "unreachable"), count: 4))
            await h.scheduler.pushArrived()
            await h.settle()
            for wait in [1, 2, 4] { await h.advance(by: .seconds(wait)) }
            #expect(await h.decision.description == "deferred: offline — retry in 8 s (attempt 4)")
            let before = h.engine.calls.count

            await h.scheduler.manualRunFinished(.send, error: nil)
            await h.settle()
            #expect(h.engine.calls.count == before + 1, "the held fetch runs at once")
            #expect(await h.decision == .idle)
        }
    }

    // MARK: Conditions

    @Test("on low battery a change waits, a push still fetches, and the change goes out once charging")
    func deferredWorkRunsWhenConditionClears() async {
        let probe = FakeProbe()
        await withScheduler(probes: [probe]) { h in
            probe.reason.withLock { $0 = .onBattery(percent: 12) }
            await h.scheduler.localChangesArrived()
            await h.settle()
            await h.advance(by: .milliseconds(500))
            #expect(h.engine.calls.isEmpty)
            #expect(await h.decision.description == "deferred: on battery 12 %")

            await h.scheduler.pushArrived()
            await h.settle()
            #expect(h.engine.calls == [Call(.fetch, at: .milliseconds(500))], "a push is urgent")

            probe.reason.withLock { $0 = nil }
            await h.advance(by: .seconds(9))
            #expect(h.engine.calls.count == 1, "the condition is read again only at the recheck")
            await h.advance(by: .seconds(1))
            #expect(h.engine.calls.last == Call(.send, at: .milliseconds(10_500)))
        }
    }

    @Test("recheckConditions runs held work at once when the condition has cleared")
    func recheckNow() async {
        let probe = FakeProbe(.highLoad(perCore: 3))
        await withScheduler(probes: [probe]) { h in
            await h.scheduler.localChangesArrived()
            await h.settle()
            await h.advance(by: .milliseconds(500))
            #expect(await h.decision.description == "deferred: high load (3.00 per core)")
            probe.reason.withLock { $0 = nil }
            await h.scheduler.recheckConditions()
            await h.settle()
            #expect(h.engine.calls == [Call(.send, at: .milliseconds(500))])
        }
    }

    @Test("held work is never starved: on low battery a change goes out after 5 min, under load after 1 min")
    func deferralIsBounded() async {
        for (reason, bound) in [
            (SyncScheduler.DeferralReason.onBattery(percent: 5), Duration.seconds(300)),
            (.highLoad(perCore: 4), .seconds(60)),
        ] {
            await withScheduler(probes: [FakeProbe(reason)]) { h in
                await h.scheduler.localChangesArrived()
                await h.settle()
                await h.advance(by: .milliseconds(500))
                for _ in 0..<40 { await h.advance(by: .seconds(10)) }
                let sends = h.engine.calls.map(\.at)
                #expect(sends.first == .milliseconds(500) + bound, "\(reason)")
            }
        }
    }

    @Test("the power probe reads /sys/class/power_supply: on battery 12 % defers, on mains or a desktop never")
    func powerProbe() async throws {
        let root = try FixtureDirectory()
        let laptop = try root.directory(
            "laptop",
            [
                "BAT0": ["type": "Battery", "status": "Discharging", "capacity": "12", "scope": "System"],
                "AC": ["type": "Mains", "online": "0"],
            ])
        let reason = await PowerProbe(root: laptop, threshold: 0.15).check()
        #expect(reason == .onBattery(percent: 12))
        #expect(reason?.description == "on battery 12 %")

        let plugged = try root.directory(
            "plugged",
            [
                "BAT0": ["type": "Battery", "status": "Discharging", "capacity": "12"],
                "ADP1": ["type": "Mains", "online": "1"],
            ])
        #expect(await PowerProbe(root: plugged, threshold: 0.15).check() == nil)

        let charged = try root.directory(
            "charged",
            [
                "BAT0": ["type": "Battery", "status": "Discharging", "capacity": "64"]
            ])
        #expect(await PowerProbe(root: charged, threshold: 0.15).check() == nil)

        let desktop = try root.directory(
            "desktop",
            [
                "AC": ["type": "Mains", "online": "1"],
                "hidpp_battery_0": ["type": "Battery", "status": "Discharging", "capacity": "3", "scope": "Device"],
            ])
        #expect(await PowerProbe(root: desktop, threshold: 0.15).check() == nil, "a mouse's battery is not ours")
        #expect(await PowerProbe(root: root.path + "/missing").check() == nil)

        let noCapacity = try root.directory(
            "energy",
            [
                "BAT1": [
                    "type": "Battery", "status": "Discharging", "energy_now": "4000000", "energy_full": "50000000",
                ]
            ])
        #expect(await PowerProbe(root: noCapacity, threshold: 0.15).check() == .onBattery(percent: 8))
    }

    @Test("the load probe reads /proc/loadavg: load per core above the threshold defers")
    func loadProbe() async throws {
        let root = try FixtureDirectory()
        let busy = try root.file("busy", "3.50 2.10 1.00 3/456 7890\n")
        #expect(await LoadProbe(path: busy, cores: 2, threshold: 1.5).check() == .highLoad(perCore: 1.75))
        #expect(await LoadProbe(path: busy, cores: 4, threshold: 1.5).check() == nil)
        let calm = try root.file("calm", "0.42 0.58 0.59 1/467 12345\n")
        #expect(await LoadProbe(path: calm, cores: 1, threshold: 1.5).check() == nil)
        let garbage = try root.file("garbage", "not a load average")
        #expect(await LoadProbe(path: garbage, cores: 1, threshold: 1.5).check() == nil)
        #expect(await LoadProbe(path: root.path + "/missing", cores: 1).check() == nil)
    }

    // MARK: Observing

    @Test("decisions read as the status pane shows them")
    func decisionDescriptions() throws {
        let until = try #require(
            Calendar.current.date(from: DateComponents(year: 2025, month: 1, day: 2, hour: 12, minute: 3, second: 4)))
        let expectations: [(Decision, String)] = [
            (.idle, "idle"),
            (.stopped, "stopped"),
            (.waiting(.send, in: .milliseconds(400), trigger: .localChanges), "sending in 0.4 s (debounce)"),
            (.waiting(.fetch, in: .seconds(30), trigger: .poll), "fetching in 30 s (poll)"),
            (.running(.fetch, trigger: .push), "fetching (push)"),
            (.running(.send, trigger: .localChanges), "sending (local changes)"),
            (.deferred(.offline(attempt: 3), retryIn: .seconds(8)), "deferred: offline — retry in 8 s (attempt 3)"),
            (.deferred(.onBattery(percent: 12), retryIn: nil), "deferred: on battery 12 %"),
            (.deferred(.rateLimited(until: until), retryIn: .seconds(4)), "rate limited until 12:03:04"),
            (
                .deferred(.serverBusy(attempt: 1), retryIn: .seconds(150)),
                "deferred: server busy — retry in 2 min 30 s (attempt 1)"
            ),
        ]
        for (decision, text) in expectations {
            #expect(decision.description == text)
        }
    }

    @Test("statusUpdates yields each decision in order, and a new subscriber starts with the current one")
    func statusUpdatesInOrder() async {
        await withScheduler(start: false) { h in
            let updates = h.scheduler.statusUpdates
            await h.scheduler.pushConnectionChanged(connected: true)
            await h.scheduler.start()
            await h.settle()
            await h.scheduler.localChangesArrived()
            await h.settle()
            await h.advance(by: .milliseconds(500))
            await h.scheduler.pushArrived()
            await h.settle()

            var latest = h.scheduler.statusUpdates.makeAsyncIterator()
            #expect(await latest.next()?.decision == .idle)

            await h.scheduler.stop()
            var decisions: [Decision] = []
            for await status in updates {
                if decisions.last != status.decision { decisions.append(status.decision) }
                if status.decision == .stopped && decisions.count > 1 { break }
            }
            #expect(
                decisions == [
                    .stopped,
                    .running(.fetch, trigger: .start), .running(.send, trigger: .start), .idle,
                    .waiting(.send, in: .milliseconds(500), trigger: .localChanges),
                    .running(.send, trigger: .localChanges), .idle,
                    .running(.fetch, trigger: .push), .idle,
                    .stopped,
                ])
        }
    }

    @Test("stop() ends the loop: nothing runs afterwards, not even what was waiting")
    func stopEndsTheLoop() async {
        await withScheduler { h in
            h.engine.duration.withLock { $0 = .seconds(1) }
            await h.scheduler.localChangesArrived()
            await h.settle()
            await h.advance(by: .milliseconds(500))
            await h.scheduler.pushArrived()
            #expect(await h.decision == .running(.send, trigger: .localChanges))

            await h.scheduler.stop()
            await h.scheduler.localChangesArrived()
            await h.scheduler.pushArrived()
            await h.clock.advance(by: .seconds(600))
            #expect(h.engine.calls == [Call(.send, at: .milliseconds(500))], "the pending fetch never ran")
            #expect(h.engine.finished.withLock { $0 } == 0, "the send in flight was cancelled")
            #expect(await h.decision == .stopped)
            #expect(h.clock.sleeperCount == 0)
        }
    }

    @Test("the test clock wakes a cancelled sleeper at once with CancellationError")
    func testClockCancellation() async {
        let clock = TestClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        await clock.waitForSleepers(count: 1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
        #expect(clock.now == TestClock.Instant(offset: .zero))
    }
}

// MARK: - Helpers

/// A call the scheduler made, and when on the test clock.
private struct Call: Equatable, CustomStringConvertible {
    var work: SyncScheduler.Work
    var at: Duration

    init(_ work: SyncScheduler.Work, at: Duration) {
        self.work = work
        self.at = at
    }

    var description: String { "\(work)@\(at)" }
}

/// Values handed out one at a time, then `nil`.
private final class Script<Value: Sendable>: Sendable {
    private let values: Mutex<[Value]>

    init(_ values: [Value]) {
        self.values = Mutex(values)
    }

    func next() -> Value? {
        values.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }
}

/// Stands in for the engine: records each send and fetch, takes `duration` on the test clock,
/// and fails with scripted errors.
private final class FakeEngine: Sendable {
    let clock: TestClock
    let duration = Mutex(Duration.zero)
    let mostAtOnce = Mutex(0)
    let finished = Mutex(0)
    private let recorded = Mutex<[Call]>([])
    private let running = Mutex(0)
    private let errors = Mutex<[SyncError]>([])
    private let permanentError = Mutex<SyncError?>(nil)

    init(clock: TestClock) {
        self.clock = clock
    }

    var calls: [Call] { recorded.withLock { $0 } }

    func reset() {
        recorded.withLock { $0 = [] }
        finished.withLock { $0 = 0 }
    }

    /// The next calls fail with these errors, one each.
    func script(_ errors: [SyncError]) {
        self.errors.withLock { $0 = errors }
    }

    func failAlways(_ error: SyncError) {
        permanentError.withLock { $0 = error }
    }

    /// Work that finds nothing to do (a send with nothing to send).
    let idle = Mutex<Set<SyncScheduler.Work>>([])

    func perform(_ work: SyncScheduler.Work) async throws -> Bool {
        recorded.withLock { $0.append(Call(work, at: clock.now.offset)) }
        if idle.withLock({ $0.contains(work) }) { return false }
        let now = running.withLock { running in
            running += 1
            return running
        }
        mostAtOnce.withLock { $0 = max($0, now) }
        defer { running.withLock { $0 -= 1 } }
        let duration = self.duration.withLock { $0 }
        if duration > .zero { try await clock.sleep(for: duration) }
        finished.withLock { $0 += 1 }
        if let error = permanentError.withLock({ $0 }) { throw error }
        if let error = errors.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw error }
        return true
    }
}

/// A condition the test sets.
private final class FakeProbe: ConditionProbe {
    let reason: Mutex<SyncScheduler.DeferralReason?>

    init(_ reason: SyncScheduler.DeferralReason? = nil) {
        self.reason = Mutex(reason)
    }

    func check() async -> SyncScheduler.DeferralReason? {
        reason.withLock { $0 }
    }
}

/// A scheduler on a test clock, driving a fake engine.
private struct Harness {
    let clock: TestClock
    let engine: FakeEngine
    let scheduler: SyncScheduler

    var decision: SyncScheduler.Decision {
        get async { await scheduler.status.decision }
    }

    /// Waits until the scheduler is parked: sleeping until its next decision, or inside a send or
    /// fetch that takes time.
    func settle() async {
        await clock.waitForSleepers(count: 1)
    }

    /// Moves time on, then waits until the scheduler has done what came due and parked again.
    func advance(by duration: Duration) async {
        await clock.advance(by: duration)
        await settle()
    }
}

/// Runs `body` with a scheduler on a fresh test clock and stops it afterwards. By default the
/// scheduler has started, its start-up fetch and send are done and forgotten, and the push socket
/// is connected (so that it does not poll). `now` fixes the wall-clock time; backoffs wait the
/// `jitter` fractions of their windows in turn, then the last one.
private func withScheduler(
    start: Bool = true, pushConnected: Bool = true, now: Date? = nil, probes: [any ConditionProbe] = [],
    jitter: [Double] = [0.5], _ body: (Harness) async -> Void
) async {
    let clock = TestClock()
    let engine = FakeEngine(clock: clock)
    let fractions = Script(jitter)
    let scheduler = SyncScheduler(
        clock: clock, now: { now ?? Date() }, probes: probes, jitter: { fractions.next() ?? jitter.last ?? 0.5 },
        perform: { try await engine.perform($0) })
    let harness = Harness(clock: clock, engine: engine, scheduler: scheduler)
    if start {
        if pushConnected { await scheduler.pushConnectionChanged(connected: true) }
        await scheduler.start()
        await harness.settle()
        engine.reset()
    }
    await body(harness)
    await scheduler.stop()
}

private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

/// A temporary directory of fixture files, removed when released.
private final class FixtureDirectory {
    let path: String

    init() throws {
        path = TemporaryFiles.path("scheduler")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Writes `contents` at `name` and returns its path.
    func file(_ name: String, _ contents: String) throws -> String {
        let file = path + "/" + name
        try contents.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Makes a power-supply tree: one directory per supply, one file per attribute, each ending
    /// in a newline as the kernel writes them.
    func directory(_ name: String, _ supplies: [String: [String: String]]) throws -> String {
        let root = path + "/" + name
        for (supply, attributes) in supplies {
            let directory = root + "/" + supply
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for (attribute, value) in attributes {
                try (value + "\n").write(toFile: directory + "/" + attribute, atomically: true, encoding: .utf8)
            }
        }
        return root
    }
}
