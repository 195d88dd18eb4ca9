import Foundation
import NIOCore
import NIOHTTP1
import SyncCore

/// Signs up, in and out on a sync server, and manages the account: its password, its sessions,
/// its deletion. What an app's account screen needs before (and beside) an engine. Failures are
/// ``SyncError``s, as everywhere in the engine; a session that can no longer be used answers
/// `notAuthenticated` with a ``SyncError/reason`` saying why (ended elsewhere, expired, account
/// deleted or disabled).
public struct AccountClient: Sendable {
    public let serverURL: URL

    public init(serverURL: URL) {
        self.serverURL = serverURL
    }

    private func client(token: String? = nil) -> DatabaseClient {
        DatabaseClient(
            database: Database(serverURL: serverURL, credentials: token.map { .token($0) } ?? .none))
    }

    /// `GET /v1/health`: whether a sync server answers at ``serverURL``.
    public func health(timeout: Duration = .seconds(2)) async throws -> HealthInfo {
        let milliseconds = Int64(
            timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return try client().decode(
            HealthInfo.self,
            try await client().send(.health, body: nil, timeout: .milliseconds(milliseconds)))
    }

    /// Creates an account, then signs in to it.
    /// - Parameter deviceLabel: what this device is called in the account's list of sessions.
    public func signUp(username: String, password: String, deviceLabel: String? = nil) async throws -> SessionInfo {
        let credentials = AccountCredentials(username: username, password: password)
        _ = try await client().send(.createAccount, body: Array(try JSONEncoder().encode(credentials)))
        return try await signIn(username: username, password: password, deviceLabel: deviceLabel)
    }

    /// Opens a session; its token goes in ``Database/Credentials``.
    /// - Parameter deviceLabel: what this device is called in the account's list of sessions (at
    ///   most 100 characters, no control characters).
    public func signIn(username: String, password: String, deviceLabel: String? = nil) async throws -> SessionInfo {
        let credentials = AccountCredentials(username: username, password: password, deviceLabel: deviceLabel)
        let data = try await client().send(.signIn, body: Array(try JSONEncoder().encode(credentials)))
        return try client().decode(SessionInfo.self, data)
    }

    /// Ends the session `token` belongs to on the server.
    public func signOut(token: String) async throws {
        _ = try await client(token: token).send(.signOut, body: nil)
    }

    /// Who `token` signs in as.
    public func account(token: String) async throws -> AccountInfo {
        try await client(token: token).account()
    }

    /// Changes the account's password. Every other session of the account ends (their devices
    /// must sign in again with the new password); the session of `token` stays signed in. A wrong
    /// `oldPassword` throws `permissionFailure`, and repeated ones are throttled as sign-ins are.
    public func changePassword(token: String, oldPassword: String, newPassword: String) async throws {
        let change = PasswordChange(oldPassword: oldPassword, newPassword: newPassword)
        _ = try await client(token: token).send(
            .changePassword, body: Array(try JSONEncoder().encode(change)))
    }

    /// The account's signed-in sessions, newest first; ``SessionDescription/isCurrent`` marks
    /// the one of `token`.
    public func sessions(token: String) async throws -> [SessionDescription] {
        try client().decode(
            SessionList.self, try await client(token: token).send(.sessions, body: nil)
        ).sessions
    }

    /// Ends one session of the account by its ``SessionDescription/id``; ending the session of
    /// `token` itself signs it out. An ID that is not a session of this account throws
    /// `unknownItem`.
    public func endSession(token: String, id: String) async throws {
        _ = try await client(token: token).send(.endSession, ["id": id], body: nil)
    }

    /// Ends every session of the account but the one of `token`; returns how many ended.
    @discardableResult
    public func endOtherSessions(token: String) async throws -> Int {
        try client().decode(
            EndedSessions.self,
            try await client(token: token).send(.endOtherSessions, body: nil)
        ).ended
    }

    /// Deletes the account, after checking its password again: its zones, records and shares
    /// (the people they were shared with lose them), its places in others' shares, its sessions
    /// and encryption settings. The username becomes free; every token of the account is refused
    /// from then on with the reason `accountDeleted`.
    public func deleteAccount(token: String, password: String) async throws {
        _ = try await client(token: token).send(
            .deleteAccount, body: Array(try JSONEncoder().encode(AccountDeletion(password: password))))
    }
}
