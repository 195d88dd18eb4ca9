/// Any `Clock<Duration>`, read as the time elapsed since the scheduler was made.
///
/// The scheduler keeps its deadlines as durations from its origin, so its plan is plain values
/// whatever the clock's instant type, and a test clock gives it exact, repeatable times.
struct ElapsedClock: Sendable {
    private let read: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    init<C: Clock<Duration>>(_ clock: C) {
        let origin = clock.now
        read = { origin.duration(to: clock.now) }
        sleeper = { try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil) }
    }

    /// The time since the origin.
    func now() -> Duration {
        read()
    }

    /// Sleeps until `deadline` (a time since the origin) or until cancelled.
    func sleep(until deadline: Duration) async throws {
        try await sleeper(deadline)
    }
}
