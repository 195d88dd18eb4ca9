/// Follows the push socket through the scheduler's statuses, to tell a first connection from a
/// reconnection after a drop.
struct PushConnectionTracker {
    /// What a status said about the push socket that the one before did not.
    enum Change: Equatable {
        case connected
        case reconnected
        case disconnected

        /// The event log's words for it.
        var text: String {
            switch self {
            case .connected: "push connected"
            case .reconnected: "push reconnected"
            case .disconnected: "push disconnected"
            }
        }
    }

    private var last: Bool?
    private var wasConnected = false

    /// Takes the next status's `pushConnected`; returns what changed, or nil. A socket already connected
    /// in the first status seen counts as connected before: the app may start after it connected, and
    /// its next connection after a drop is a reconnection all the same.
    mutating func observe(pushConnected: Bool) -> Change? {
        defer {
            last = pushConnected
            if pushConnected { wasConnected = true }
        }
        guard let last, last != pushConnected else { return nil }
        guard pushConnected else { return .disconnected }
        return wasConnected ? .reconnected : .connected
    }
}
