/// Why ``waitUntil(_:timeout:poll:_:observed:)`` gave up: what it waited for, for how long, and
/// what it saw last, so that a failure on a busy machine explains itself.
public struct WaitTimeout: Error, CustomStringConvertible {
    /// What the test waited for, in its words.
    public var condition: String
    /// How long it waited.
    public var timeout: Duration
    /// What the `observed` closure described when the wait gave up, if there was one.
    public var observed: String?

    public var description: String {
        "gave up after \(timeout) waiting until \(condition)" + (observed.map { "; last seen: \($0)" } ?? "")
    }
}

/// Waits until `condition` holds, checking it every `poll`; throws ``WaitTimeout`` after `timeout`.
///
/// The way a test waits for something to happen: never a sleep of a guessed length. The deadline
/// is generous because it only matters when something is broken; on a busy machine a wait is
/// slower, not wrong. When the waiting task itself was starved (a poll that should take
/// milliseconds took seconds), the deadline moves by that much: the code under test was most
/// likely starved too, and the wait counts only the time it could have looked.
///
/// ```swift
/// try await waitUntil("B has A's edit") {
///     b.names == ["Grace"]
/// } observed: {
///     "B has \(b.names)"
/// }
/// ```
///
/// - Parameters:
///   - condition: What the test waits for, completing "waiting until …" in the error.
///   - timeout: How long to wait before giving up.
///   - poll: How long to sleep between checks.
///   - check: Returns true once the condition holds.
///   - observed: Describes the state it saw, for the error when the wait gives up.
public func waitUntil(
    _ condition: String, timeout: Duration = .seconds(60), poll: Duration = .milliseconds(10),
    _ check: () async throws -> Bool, observed: (() async -> String)? = nil
) async throws {
    let clock = ContinuousClock()
    var deadline = clock.now + timeout
    // A sleep that overshoots by more than this means the waiting task was starved.
    let stall = Duration.seconds(1)
    while true {
        if try await check() { return }
        if clock.now >= deadline {
            throw WaitTimeout(condition: condition, timeout: timeout, observed: await observed?())
        }
        let before = clock.now
        try await Task.sleep(for: poll)
        let overshoot = clock.now - before - poll
        if overshoot > stall { deadline += overshoot }
    }
}
