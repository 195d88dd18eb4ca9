import SyncCore

/// The `notAuthenticated` answers to a token whose session can no longer be used, each with the
/// ``SyncError/Reason`` a client acts on and a message that says what happened and what to do.
enum SessionRefusal {
    static func error(for reason: SyncError.Reason, lifetime: String? = nil) -> SyncError {
        let message =
            switch reason {
            case .sessionEnded:
                "this session was ended on another device (or by a password change); sign in again"
            case .sessionExpired:
                lifetime.map { "this session expired (\($0)); sign in again" }
                    ?? "this session expired; sign in again"
            case .accountDeleted:
                "the account of this session was deleted; create a new account or sign in to another one"
            case .accountDisabled:
                "the server's operator disabled this account; ask them to enable it again"
            default:
                "this session can no longer be used; sign in again"
            }
        var error = SyncError(.notAuthenticated, message)
        error.reason = reason
        return error
    }

    /// A token no session has: never issued, signed out, or ended so long ago that it is forgotten.
    static let unknown = SyncError(
        .notAuthenticated, "the session token is unknown or signed out; sign in again with POST /v1/sessions")
}
