import Foundation

/// Decides when an engine with `automaticallySync` sends and fetches, as the system task
/// scheduler does for CKSyncEngine, so that an app never has to.
///
/// Triggers:
/// - local changes: send after ``Policy/debounce`` without further changes, yet never more than
///   ``Policy/maximumDelay`` after the first one, however long the editing goes on;
/// - a push: fetch at once;
/// - while the push socket is down: fetch every ``Policy/pollInterval``;
/// - after a transient failure: run the failed work again after an exponential backoff with full
///   jitter (a random wait from 0 to `min(cap, base · 2^(n−1))` after the n-th consecutive failure),
///   never before the server's `retryAfter`. Other failures are recorded, not retried, until
///   something asks for the work again.
///
/// Conditions:
/// - reachability: after a network failure all scheduled work waits for the backoff, or for a
///   sign that the server is back: the push socket connecting, a push, a manual sync succeeding;
/// - rate limiting and a busy server: all scheduled work waits until the backoff ends;
/// - each ``ConditionProbe`` (power, load): while one reports a reason, work that no one waits for
///   (debounced sends, polls, retries) is held, for at most ``Policy/lowPowerMaximumDeferral`` on
///   low battery (local changes must reach the server while the device still runs) or
///   ``Policy/conditionMaximumDeferral`` otherwise; urgent work (a push, the start, an account
///   change) runs regardless. Probes are read again every ``Policy/conditionRecheck``, and held
///   work runs at the first reading that allows it, or at once after ``recheckConditions()``.
///
/// Coalescing: the scheduler runs one send or fetch at a time. What arrives while one runs is
/// folded into the next run: any number of pushes during a send lead to exactly one fetch after
/// it. When both are due, a run fetches first and then sends.
///
/// Manual syncs (`sendChanges()`, `fetchChanges()`) do not go through the scheduler and do not
/// change its plan; report their outcome with ``manualRunFinished(_:error:)`` so that the status
/// and reachability stay true.
///
/// Every decision is published as a ``Status`` on ``statusUpdates``. Time comes only from the
/// injected clock, so that tests drive it with a test clock and never wait.
///
/// The scheduler runs from ``start()`` until ``stop()``, which an owner must call: the running
/// loop keeps the scheduler alive.
public actor SyncScheduler {
    /// The timings this scheduler follows.
    public nonisolated let policy: Policy

    private let clock: ElapsedClock
    private let date: @Sendable () -> Date
    nonisolated package let probes: [any ConditionProbe]
    private let jitter: @Sendable () -> Double
    private let perform: @Sendable (Work) async throws -> Bool
    private let broadcast: ValueBroadcast<Status>

    private var plan: SchedulerPlan
    private var decision = Decision.stopped
    private var loop: Task<Void, Never>?
    /// A loop that ``stop()`` cancelled and that may not have ended yet.
    private var stopping: Task<Void, Never>?
    private var sleeper: Task<Void, Never>?

    /// Creates a scheduler; it does nothing until ``start()``.
    ///
    /// - Parameters:
    ///   - clock: The clock every wait is measured on; a test passes a test clock.
    ///   - now: The wall-clock time, for the dates in ``Status`` and "rate limited until 12:03:04".
    ///   - policy: The timings.
    ///   - probes: The conditions that hold non-urgent work back.
    ///   - jitter: A random number from 0 to 1 for each backoff: the part of the window to wait.
    ///   - perform: Runs a send or a fetch, throwing a `SyncError` when it fails; returns false when there was
    ///     nothing to do (a send with nothing to send), which reached no server and so is no success.
    public init(
        clock: any Clock<Duration> = ContinuousClock(),
        now: @escaping @Sendable () -> Date = { Date() },
        policy: Policy = .standard,
        probes: [any ConditionProbe] = [PowerProbe(), LoadProbe()],
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        perform: @escaping @Sendable (Work) async throws -> Bool
    ) {
        self.clock = ElapsedClock(clock)
        self.date = now
        self.policy = policy
        self.probes = probes
        self.jitter = jitter
        self.perform = perform
        self.plan = SchedulerPlan(policy: policy)
        // A decision does not replace the one before for a reader that follows them all: 64 kept unread.
        self.broadcast = ValueBroadcast(Status(decision: .stopped), bufferingNewest: 64)
    }

    // MARK: Status

    /// The current status.
    public var status: Status {
        Status(
            decision: decision, lastSuccess: plan.lastSuccess, lastFailure: plan.lastFailure,
            pushConnected: plan.pushConnected, consecutiveFailures: plan.consecutiveFailures,
            lastSuccessWork: plan.lastSuccessWork)
    }

    /// Every change of ``status``, starting with the current one. Each access makes a new stream,
    /// so any number of displays can follow along.
    public nonisolated var statusUpdates: AsyncStream<Status> {
        broadcast.subscribe()
    }

    // MARK: Running

    /// Starts deciding: fetches and sends at once (unsent changes may be left from before), then
    /// follows the triggers. Does nothing if already started.
    public func start() {
        guard loop == nil else { return }
        let now = clock.now()
        plan.request(.fetch, trigger: .start, now: now)
        plan.request(.send, trigger: .start, now: now)
        // A loop being stopped may still be finishing its send or fetch: never two at once.
        let previous = stopping
        loop = Task {
            await previous?.value
            await self.runLoop()
        }
    }

    /// Stops deciding: cancels the send or fetch in flight, and returns once the loop has ended,
    /// after which nothing runs until ``start()``. Pending triggers and any backoff are kept.
    public func stop() async {
        guard let loop else { return }
        self.loop = nil
        stopping = loop
        loop.cancel()
        sleeper?.cancel()
        await loop.value
        if stopping == loop { stopping = nil }
        // Unless started again meanwhile.
        if self.loop == nil { publish(.stopped) }
    }

    // MARK: Triggers

    /// The app recorded local changes: send them after the debounce.
    public func localChangesArrived() {
        plan.request(.send, trigger: .localChanges, now: clock.now())
        wake()
    }

    /// The server pushed a change notification: fetch at once. A push also shows that the server
    /// is reachable.
    public func pushArrived() {
        let now = clock.now()
        plan.reachable(now: now)
        plan.request(.fetch, trigger: .push, now: now)
        wake()
    }

    /// The push socket connected or disconnected. While it is down, the scheduler polls; when it
    /// connects, the server is reachable again, work held by an offline backoff runs at once, and a
    /// fetch catches up with what changed while no push could arrive (since the last fetch or poll).
    public func pushConnectionChanged(connected: Bool) {
        plan.pushConnected = connected
        if connected {
            let now = clock.now()
            plan.reachable(now: now)
            // Before the start, the start's own fetch catches up.
            if loop != nil { plan.request(.fetch, trigger: .reconnected, now: now) }
        }
        publish()
        wake()
    }

    /// The account signed in, out or switched: fetch and send at once for the new account.
    public func accountChanged() {
        let now = clock.now()
        plan.accountChanged(now: now)
        plan.request(.fetch, trigger: .accountChanged, now: now)
        plan.request(.send, trigger: .accountChanged, now: now)
        wake()
    }

    /// Reads the condition probes again now, for an app that learns that a condition changed
    /// (a charger plugged in) before the next recheck.
    public func recheckConditions() {
        plan.condition = nil
        wake()
    }

    /// A manual send or fetch, which bypassed the scheduler, ended. Updates the status; a success
    /// ends a backoff (the server is back), and a failure's `retryAfter` holds scheduled work.
    public func manualRunFinished(_ work: Work, error: (any Error)?) {
        plan.manualRunFinished(work, error: error, now: clock.now(), date: date())
        publish()
        wake()
    }

    // MARK: The loop

    private func runLoop() async {
        while !Task.isCancelled {
            switch plan.next(now: clock.now()) {
            case .checkConditions:
                let reason = await firstDeferral()
                plan.condition = .init(reason: reason, checkedAt: clock.now())
            case .run(let works):
                await run(works)
            case .wait(let deadline, let decision):
                publish(decision)
                await sleep(until: deadline)
            }
        }
    }

    /// Runs `works` one after another; a transient failure ends the run.
    private func run(_ works: [Work]) async {
        for work in works {
            guard !Task.isCancelled, let item = plan.begin(work) else { return }
            publish(.running(work, trigger: item.trigger))
            var failure: (any Error)?
            var didWork = true
            do {
                didWork = try await perform(work)
            } catch {
                failure = error
            }
            // Stopped meanwhile: the outcome belongs to no plan.
            if Task.isCancelled { return }
            let goOn = plan.finish(
                work, item, error: failure, didWork: didWork, now: clock.now(), date: date(), jitter: jitter)
            publish()
            guard goOn else { return }
        }
    }

    private func firstDeferral() async -> DeferralReason? {
        for probe in probes {
            if let reason = await probe.check() { return reason }
        }
        return nil
    }

    /// Sleeps until `deadline`, or until a trigger changes the plan (see ``wake()``).
    private func sleep(until deadline: Duration?) async {
        let clock = self.clock
        // With nothing to wait for, sleep on the clock all the same (a test clock then sees the
        // scheduler parked); a trigger wakes it.
        let target = deadline ?? clock.now() + .seconds(365 * 86_400)
        let task = Task<Void, Never> { try? await clock.sleep(until: target) }
        sleeper = task
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        sleeper = nil
    }

    /// Makes the loop decide again. Only a sleeping loop needs this: a loop that runs work or
    /// reads probes decides again when it is done.
    private func wake() {
        sleeper?.cancel()
    }

    private func publish(_ decision: Decision? = nil) {
        if let decision { self.decision = decision }
        broadcast.publish(status)
    }
}
