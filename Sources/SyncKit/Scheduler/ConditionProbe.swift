/// One condition that can hold back non-urgent sync work, such as power or system load.
///
/// The scheduler asks its probes before it runs work that a user is not waiting for (a debounced
/// send, a poll, a retry), and again every `conditionRecheck` while that work is held. Urgent work
/// (a push, the start, an account change) and manual syncs never ask. Reachability and rate
/// limiting are not probes: the scheduler learns them from the engine's failures and the push socket.
///
/// A probe is cheap and never throws: a condition it cannot read is no reason to hold work.
public protocol ConditionProbe: Sendable {
    /// Why work should wait now, or `nil` if it may run.
    func check() async -> SyncScheduler.DeferralReason?
}
