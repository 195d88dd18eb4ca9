import Foundation
import SyncClient
import SyncCore

/// What the scheduler has pending, what holds it back, and what it does next.
///
/// A value without a clock, tasks or I/O: every method takes the time, so that each decision is
/// a function of the calls made and the times they were made at. Times are durations since the
/// scheduler's origin (see ``ElapsedClock``).
struct SchedulerPlan: Sendable {
    typealias Work = SyncScheduler.Work
    typealias Trigger = SyncScheduler.Trigger
    typealias Decision = SyncScheduler.Decision
    typealias DeferralReason = SyncScheduler.DeferralReason

    /// Work waiting to run.
    struct Pending: Sendable {
        var trigger: Trigger
        /// When it was first asked for: a send is due no later than this plus `maximumDelay`.
        var requested: Duration
        /// When it may run.
        var due: Duration
        /// When a condition first held it back after it was due.
        var heldSince: Duration?
    }

    /// The wait after a transient failure. All scheduled work waits it out.
    struct Backoff: Sendable {
        enum Kind: Sendable {
            case offline
            case serverBusy
            case rateLimited
            case accountUnavailable

            init(_ code: SyncError.Code) {
                switch code {
                case .networkFailure, .networkUnavailable: self = .offline
                case .requestRateLimited: self = .rateLimited
                case .notAuthenticated, .accountTemporarilyUnavailable: self = .accountUnavailable
                default: self = .serverBusy
                }
            }
        }

        var kind: Kind
        var until: Duration
        /// The server's `retryAfter`: nothing runs before it, whatever else happens.
        var notBefore: Duration
        /// `until` as a date, for "rate limited until 12:03:04".
        var date: Date
    }

    /// What the scheduler's loop does next.
    enum Step: Sendable {
        /// Read the condition probes and store their answer in ``condition``.
        case checkConditions
        /// Run this work, in this order.
        case run([Work])
        /// Show the decision and sleep until the time, or until woken if there is none.
        case wait(until: Duration?, Decision)
    }

    /// A probe reading, and when it was taken.
    struct ConditionReading: Sendable {
        var reason: DeferralReason?
        var checkedAt: Duration
    }

    let policy: SyncScheduler.Policy
    private(set) var pending: [Work: Pending] = [:]
    private(set) var backoff: Backoff?
    /// Consecutive transient failures: the backoff attempt.
    private(set) var transientFailures = 0
    private(set) var consecutiveFailures = 0
    private(set) var lastSuccess: Date?
    private(set) var lastSuccessWork: Work?
    private(set) var lastFailure: SyncScheduler.Failure?
    /// When a fetch last finished (or the origin): polls count from here.
    private(set) var lastFetch: Duration = .zero
    var pushConnected = false
    var condition: ConditionReading?

    init(policy: SyncScheduler.Policy) {
        self.policy = policy
    }

    /// Fetch first, then send.
    private static let runOrder: [Work] = [.fetch, .send]

    /// A zero interval would make the loop poll or read probes without ever sleeping.
    private static let shortestInterval = Duration.milliseconds(100)
    private var pollInterval: Duration { max(policy.pollInterval, Self.shortestInterval) }
    private var conditionRecheck: Duration { max(policy.conditionRecheck, Self.shortestInterval) }

    // MARK: Requests

    /// Asks for `work`, folding it into work already pending: a local change extends the debounce
    /// (never past `maximumDelay` from the first change), anything else is due at once, and an
    /// urgent trigger makes pending work urgent.
    mutating func request(_ work: Work, trigger: Trigger, now: Duration) {
        let debounced = min(now + policy.debounce, (pending[work]?.requested ?? now) + policy.maximumDelay)
        let due = trigger == .localChanges ? debounced : now
        guard var item = pending[work] else {
            pending[work] = Pending(trigger: trigger, requested: now, due: due)
            return
        }
        item.due = item.trigger == .localChanges && trigger == .localChanges ? due : min(item.due, due)
        if trigger.isUrgent && !item.trigger.isUrgent { item.trigger = trigger }
        pending[work] = item
    }

    /// The server answered, or the push socket connected: an offline backoff ends now, or at the
    /// server's `retryAfter` if that is later.
    mutating func reachable(now: Duration) {
        endBackoff(of: .offline, now: now)
    }

    /// The account changed: a backoff for an unavailable account ends.
    mutating func accountChanged(now: Duration) {
        endBackoff(of: .accountUnavailable, now: now)
    }

    private mutating func endBackoff(of kind: Backoff.Kind, now: Duration) {
        guard var backoff, backoff.kind == kind else { return }
        backoff.until = backoff.notBefore
        self.backoff = backoff.until > now ? backoff : nil
    }

    // MARK: Deciding

    /// Decides what to do at `now`. Marks when due work starts being held by a condition.
    mutating func next(now: Duration) -> Step {
        let pollDue = lastFetch + pollInterval
        if !pushConnected, pending[.fetch] == nil, now >= pollDue {
            pending[.fetch] = Pending(trigger: .poll, requested: now, due: now)
        }
        if let backoff {
            if now < backoff.until {
                return .wait(until: backoff.until, .deferred(reason(for: backoff), retryIn: backoff.until - now))
            }
            self.backoff = nil
        }
        let due = Self.runOrder.filter { pending[$0].map { $0.due <= now } ?? false }
        guard !due.isEmpty else { return waitForNextDue(now: now, pollDue: pollDue) }
        guard due.contains(where: { pending[$0]?.trigger.isUrgent == false }) else { return .run(due) }
        guard let condition, now < condition.checkedAt + conditionRecheck else { return .checkConditions }
        guard let reason = condition.reason else { return .run(due) }

        // Urgent work runs; other work waits for the condition to clear, but not past its bound.
        var runnable: [Work] = []
        var wake = condition.checkedAt + conditionRecheck
        for work in due {
            guard var item = pending[work] else { continue }
            if item.trigger.isUrgent {
                runnable.append(work)
                continue
            }
            let since = item.heldSince ?? now
            item.heldSince = since
            pending[work] = item
            let limit = since + policy.maximumDeferral(for: reason)
            if now >= limit { runnable.append(work) } else { wake = min(wake, limit) }
        }
        guard runnable.isEmpty else { return .run(runnable) }
        for item in pending.values where item.due > now { wake = min(wake, item.due) }
        return .wait(until: wake, .deferred(reason, retryIn: nil))
    }

    /// Nothing is due: wait for the earliest pending work, or the next poll.
    private func waitForNextDue(now: Duration, pollDue: Duration) -> Step {
        let next = Self.runOrder.compactMap { work in pending[work].map { (work, $0) } }.min { $0.1.due < $1.1.due }
        if let (work, item) = next {
            let wake = pushConnected ? item.due : min(item.due, pollDue)
            return .wait(until: wake, .waiting(work, in: item.due - now, trigger: item.trigger))
        }
        if !pushConnected {
            return .wait(until: pollDue, .waiting(.fetch, in: pollDue - now, trigger: .poll))
        }
        return .wait(until: nil, .idle)
    }

    private func reason(for backoff: Backoff) -> DeferralReason {
        switch backoff.kind {
        case .offline: .offline(attempt: transientFailures)
        case .serverBusy: .serverBusy(attempt: transientFailures)
        case .rateLimited: .rateLimited(until: backoff.date)
        case .accountUnavailable: .accountUnavailable(attempt: transientFailures)
        }
    }

    // MARK: Outcomes

    /// Takes `work` off the pending list as it starts; what arrives while it runs is pending anew.
    mutating func begin(_ work: Work) -> Pending? {
        pending.removeValue(forKey: work)
    }

    /// Records how a scheduled run of `work` ended, and whether the run goes on to its next work.
    ///
    /// A transient failure puts the work back, due after a backoff of a random part (`jitter`,
    /// from 0 to 1) of the window, and never before the server's `retryAfter`; the run stops.
    /// Another failure is recorded and dropped until something asks for the work again. A run that had
    /// nothing to do (`didWork` false) reached no server: it is no success, and a failure before it stays the
    /// status's.
    mutating func finish(
        _ work: Work, _ item: Pending, error: (any Error)?, didWork: Bool = true, now: Duration, date: Date,
        jitter: () -> Double
    ) -> Bool {
        if work == .fetch { lastFetch = now }
        guard let error else {
            if didWork { succeeded(work, date: date) }
            return true
        }
        if Self.isCancellation(error) { return true }
        failed(work, error: error, date: date)
        guard let syncError = error as? SyncError, syncError.isTransient else {
            transientFailures = 0
            return true
        }
        transientFailures += 1
        // Whatever asked for the same work meanwhile goes with the retry; urgency is kept.
        let arrived = pending[work]
        pending[work] = Pending(
            trigger: arrived.map { $0.trigger.isUrgent ? $0.trigger : .retry } ?? .retry,
            requested: min(item.requested, arrived?.requested ?? item.requested), due: now)

        let window = policy.backoffWindow(afterFailures: transientFailures)
        let wait = Duration.seconds(window.inSeconds * min(1, max(0, jitter())))
        let notBefore = now + .seconds(max(0, syncError.retryAfter ?? 0))
        let until = max(now + wait, notBefore)
        backoff = Backoff(
            kind: Backoff.Kind(syncError.code), until: until, notBefore: notBefore,
            date: date.addingTimeInterval((until - now).inSeconds))
        return false
    }

    /// Records how a manual send or fetch ended, which bypassed the plan. Success shows that the
    /// server is reachable and ends any backoff; a failure with `retryAfter` holds scheduled work
    /// until then, as the server asked. Nothing else in the plan changes.
    mutating func manualRunFinished(_ work: Work, error: (any Error)?, now: Duration, date: Date) {
        if work == .fetch { lastFetch = now }
        guard let error else {
            succeeded(work, date: date)
            backoff = nil
            if work == .fetch, pending[.fetch]?.trigger == .poll { pending[.fetch] = nil }
            return
        }
        if Self.isCancellation(error) { return }
        failed(work, error: error, date: date)
        guard let syncError = error as? SyncError, let retryAfter = syncError.retryAfter, retryAfter > 0 else {
            return
        }
        let notBefore = now + .seconds(retryAfter)
        if var backoff, backoff.until >= notBefore {
            backoff.notBefore = max(backoff.notBefore, notBefore)
            self.backoff = backoff
        } else {
            backoff = Backoff(
                kind: Backoff.Kind(syncError.code), until: notBefore, notBefore: notBefore,
                date: date.addingTimeInterval(retryAfter))
        }
    }

    private mutating func succeeded(_ work: Work, date: Date) {
        transientFailures = 0
        consecutiveFailures = 0
        lastSuccess = date
        lastSuccessWork = work
    }

    private mutating func failed(_ work: Work, error: any Error, date: Date) {
        consecutiveFailures += 1
        lastFailure = SyncScheduler.Failure(date: date, work: work, error: error)
    }

    /// A cancelled send or fetch was stopped on purpose: neither a failure nor to be retried.
    private static func isCancellation(_ error: any Error) -> Bool {
        error is CancellationError || (error as? SyncError)?.code == .operationCancelled
    }
}
