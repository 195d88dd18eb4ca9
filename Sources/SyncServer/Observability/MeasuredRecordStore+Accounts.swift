import Foundation
import SyncCore

/// The account lifecycle's store calls, timed as every other.
extension MeasuredRecordStore {
    func createSession(_ session: StoredSession, tokenHash: String) async throws {
        try await timed("createSession") { try await base.createSession(session, tokenHash: tokenHash) }
    }
    func sessionState(tokenHash: String) async throws -> SessionState {
        try await timed("sessionState") { try await base.sessionState(tokenHash: tokenHash) }
    }
    func touchSession(tokenHash: String, usedAt: Date, address: String) async throws {
        try await timed("touchSession") {
            try await base.touchSession(tokenHash: tokenHash, usedAt: usedAt, address: address)
        }
    }
    func sessions(userRecordName: String) async throws -> [(tokenHash: String, session: StoredSession)] {
        try await timed("sessions") { try await base.sessions(userRecordName: userRecordName) }
    }
    func endSessions(
        userRecordName: String, id: String?, sparing: String?, reason: SyncError.Reason, at now: Date
    ) async throws -> [String] {
        try await timed("endSessions") {
            try await base.endSessions(
                userRecordName: userRecordName, id: id, sparing: sparing, reason: reason, at: now)
        }
    }
    func expireSessions(lastUsedBefore: Date, createdBefore: Date, at now: Date) async throws -> Int {
        try await timed("expireSessions") {
            try await base.expireSessions(lastUsedBefore: lastUsedBefore, createdBefore: createdBefore, at: now)
        }
    }
    func forgetEndedSessions(endedBefore: Date) async throws -> Int {
        try await timed("forgetEndedSessions") { try await base.forgetEndedSessions(endedBefore: endedBefore) }
    }
    func changePassword(userRecordName: String, passwordHash: String, sparing: String, at now: Date) async throws
        -> [String]
    {
        try await timed("changePassword") {
            try await base.changePassword(
                userRecordName: userRecordName, passwordHash: passwordHash, sparing: sparing, at: now)
        }
    }
    func setDisabled(_ disabled: Bool, userRecordName: String) async throws -> Bool {
        try await timed("setDisabled") { try await base.setDisabled(disabled, userRecordName: userRecordName) }
    }
    func accountSummaries() async throws -> [AccountSummary] {
        try await timed("accountSummaries") { try await base.accountSummaries() }
    }
    func memberships(user: String) async throws -> [StoredShare] {
        try await timed("memberships") { try await base.memberships(user: user) }
    }
    func deleteAccount(userRecordName: String, at now: Date) async throws -> [String] {
        try await timed("deleteAccount") { try await base.deleteAccount(userRecordName: userRecordName, at: now) }
    }
}
