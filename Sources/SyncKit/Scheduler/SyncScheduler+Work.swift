extension SyncScheduler {
    /// What the scheduler asks the engine to do. When both are due, one run fetches first and then
    /// sends, so that a send meets the server's latest records and conflicts surface early.
    public enum Work: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Send pending local changes (the engine's `sendChanges`).
        case send
        /// Fetch changes from the server (the engine's `fetchChanges`).
        case fetch

        public var description: String { rawValue }
    }

    /// Why work was scheduled.
    public enum Trigger: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The app recorded pending changes: send after a short debounce.
        case localChanges
        /// The server pushed a change notification: fetch now.
        case push
        /// The push socket is down and the poll interval has passed: fetch.
        case poll
        /// The wait after a transient failure has passed: run what failed again.
        case retry
        /// The scheduler started: fetch, and send anything left from before.
        case start
        /// The account signed in, out or switched: fetch and send for the new account.
        case accountChanged
        /// The push socket connected: fetch what changed while it was down (or before it first
        /// connected), which no push announced.
        case reconnected

        /// Whether work for this trigger runs despite power and load conditions: a user waits
        /// for it (a push is another device's edit, a start or an account change is on screen).
        public var isUrgent: Bool {
            switch self {
            case .push, .start, .accountChanged, .reconnected: true
            case .localChanges, .poll, .retry: false
            }
        }

        public var description: String {
            switch self {
            case .localChanges: "local changes"
            case .push: "push"
            case .poll: "poll"
            case .retry: "retry"
            case .start: "start"
            case .accountChanged: "account change"
            case .reconnected: "push reconnected"
            }
        }
    }
}
