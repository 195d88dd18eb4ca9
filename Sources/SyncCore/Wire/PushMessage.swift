/// A message on the push WebSocket (`GET /v1/push`): the counterpart of CloudKit's silent push.
public struct PushMessage: Codable, Sendable, Hashable {
    /// What happened.
    public enum Event: String, Codable, Sendable, Hashable {
        /// The socket is subscribed: from now on no change goes unannounced. Clients fetch once
        /// on receiving it, to catch changes made while they were not listening.
        case connected
        /// Something in the database ``scope`` changed: fetch database changes.
        case databaseChanged
    }

    public var event: Event
    /// The database that changed, for `databaseChanged`.
    public var scope: DatabaseScope?

    public init(event: Event, scope: DatabaseScope? = nil) {
        self.event = event
        self.scope = scope
    }
}
