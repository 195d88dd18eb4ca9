import Foundation
import SyncCore

/// Where the server keeps the lifecycle of accounts and sessions: each session's ID, label and
/// address, the sessions that ended and why, disabled accounts, and account deletion.
///
/// A session that ends for any reason but its own sign-out leaves an ended-session row (its token
/// hash, its user and the reason), so that a later request with its token is told why it was
/// refused ("this session was ended on another device") rather than "unknown token". Those rows
/// are forgotten a sliding session lifetime after the end (``forgetEndedSessions(endedBefore:)``).
public protocol AccountStore: Sendable {
    /// Remembers a new session by the SHA-256 of its bearer token.
    func createSession(_ session: StoredSession, tokenHash: String) async throws
    /// What a bearer token's hash stands for now: a live session (with whether its account is
    /// disabled), a session that ended (and why), or nothing.
    func sessionState(tokenHash: String) async throws -> SessionState
    /// Records that a session was used at `usedAt` from `address`, which moves its sliding end.
    func touchSession(tokenHash: String, usedAt: Date, address: String) async throws
    /// The live sessions of an account, newest first, each with its token hash.
    func sessions(userRecordName: String) async throws -> [(tokenHash: String, session: StoredSession)]
    /// Ends live sessions of an account for `reason`: the one with ID `id` (nil: every one), but
    /// never the one whose token hash is `sparing`. Returns the ended sessions' token hashes.
    func endSessions(
        userRecordName: String, id: String?, sparing: String?, reason: SyncError.Reason, at now: Date
    ) async throws -> [String]
    /// Ends, as expired, the sessions last used before `lastUsedBefore` or created before
    /// `createdBefore`. Returns how many.
    @discardableResult
    func expireSessions(lastUsedBefore: Date, createdBefore: Date, at now: Date) async throws -> Int
    /// Forgets the ended sessions that ended before `endedBefore`. Returns how many.
    @discardableResult
    func forgetEndedSessions(endedBefore: Date) async throws -> Int
    /// Replaces an account's password hash and, in the same transaction, ends every session of it
    /// but `sparing` with the reason `sessionEnded`. Returns the ended sessions' token hashes.
    func changePassword(userRecordName: String, passwordHash: String, sparing: String, at now: Date) async throws
        -> [String]
    /// Disables or enables an account; sessions are kept either way. Returns false when there is
    /// no such account.
    func setDisabled(_ disabled: Bool, userRecordName: String) async throws -> Bool
    /// Every account, by username, with its count of live sessions (for operators).
    func accountSummaries() async throws -> [AccountSummary]
    /// The shares of other owners in which `user` is a participant who has not left (invited or
    /// accepted), for leaving them before the account goes.
    func memberships(user: String) async throws -> [StoredShare]
    /// Deletes the account's row and every row it owns (zones and their tombstones, records,
    /// shares, replay answers, encryption settings); each of its live sessions becomes an ended one
    /// with the reason `accountDeleted`. The username is free afterwards. Returns the ended
    /// sessions' token hashes. The caller leaves the account's memberships and deletes its zones
    /// first, through the ordinary paths, so that everyone who saw them is told.
    func deleteAccount(userRecordName: String, at now: Date) async throws -> [String]
}

/// What a bearer token stands for, as ``AccountStore/sessionState(tokenHash:)`` reads it.
public enum SessionState: Sendable, Hashable {
    /// A live session; its account may be disabled.
    case live(StoredSession, accountDisabled: Bool)
    /// A session that ended, and why.
    case ended(SyncError.Reason)
    /// No session has this token (never had, signed out, or ended long ago).
    case unknown
}

/// An account as an operator's list shows it.
public struct AccountSummary: Sendable, Hashable {
    public var userRecordName: String
    public var username: String
    public var createdAt: Date
    public var sessionCount: Int
    public var isDisabled: Bool

    public init(userRecordName: String, username: String, createdAt: Date, sessionCount: Int, isDisabled: Bool) {
        self.userRecordName = userRecordName
        self.username = username
        self.createdAt = createdAt
        self.sessionCount = sessionCount
        self.isDisabled = isDisabled
    }
}

extension StoredSession {
    /// A new session's ID: random, and not derived from its token, so that listing sessions
    /// reveals nothing a request could be signed with.
    static func newID() -> String { RandomIdentifier.hexadecimal(bytes: 16) }
}
