import Foundation

/// The time the server goes by: the date sessions are stamped and expire with, a steady reading
/// for throttles, and sleeping until a session's end.
///
/// ``system`` reads the real clocks. Tests pass a clock they move by hand (SyncTesting's
/// `TestClock`), so that a throttle's growing waits and a session's expiry happen when the test
/// says, never after a guessed real-time delay.
public struct ServerClock: Sendable {
    private let readDate: @Sendable () -> Date
    private let readElapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    private init(
        date: @escaping @Sendable () -> Date, elapsed: @escaping @Sendable () -> Duration,
        sleep: @escaping @Sendable (Duration) async throws -> Void
    ) {
        readDate = date
        readElapsed = elapsed
        sleeper = sleep
    }

    /// The wall clock for dates and the continuous clock for intervals.
    public static let system: ServerClock = {
        let clock = ContinuousClock()
        let origin = clock.now
        return ServerClock(
            date: { Date() }, elapsed: { origin.duration(to: clock.now) },
            sleep: { duration in try await clock.sleep(for: duration) })
    }()

    /// A server clock that reads and sleeps on `clock`; its dates start at `start`.
    public init<C: Clock & Sendable>(_ clock: C, startingAt start: Date) where C.Duration == Duration {
        let origin = clock.now
        self.init(
            date: { start.addingTimeInterval(origin.duration(to: clock.now).seconds) },
            elapsed: { origin.duration(to: clock.now) },
            sleep: { duration in try await clock.sleep(for: duration) })
    }

    /// The current date.
    public func now() -> Date { readDate() }

    /// Time since the clock started; only differences between two readings mean anything.
    public func elapsed() -> Duration { readElapsed() }

    /// Suspends for `duration` of this clock's time; throws `CancellationError` when cancelled.
    public func sleep(for duration: Duration) async throws {
        try await sleeper(duration)
    }
}
