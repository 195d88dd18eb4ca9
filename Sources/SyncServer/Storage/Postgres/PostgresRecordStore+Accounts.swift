import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Sessions, ended sessions, disabled and deleted accounts in PostgreSQL (schema version 5).
extension PostgresRecordStore {
    private static let sessionColumns = "token_hash, id, user_record_name, label, address, created_at, last_used_at"

    public func createSession(_ session: StoredSession, tokenHash: String) async throws {
        try await query(
            """
            INSERT INTO session (token_hash, id, user_record_name, label, address, created_at, last_used_at)
            VALUES (\(tokenHash), \(session.id), \(session.userRecordName), \(session.label), \(session.address),
                \(session.createdAt.millisecondsSince1970), \(session.lastUsedAt.millisecondsSince1970))
            """, logger: logger)
    }

    public func sessionState(tokenHash: String) async throws -> SessionState {
        let rows = try await query(
            """
            SELECT s.token_hash, s.id, s.user_record_name, s.label, s.address, s.created_at, s.last_used_at,
                a.disabled
            FROM session s JOIN account a ON a.user_record_name = s.user_record_name
            WHERE s.token_hash = \(tokenHash)
            """, logger: logger)
        for row in rows {
            let (_, id, user, label, address, created, used, disabled) = try row.decode(
                (String, String, String, String?, String?, Int64, Int64, Bool).self)
            return .live(
                StoredSession(
                    userRecordName: user, createdAt: Date(millisecondsSince1970: created),
                    lastUsedAt: Date(millisecondsSince1970: used), id: id, label: label, address: address),
                accountDisabled: disabled)
        }
        for reason in try await query(
            "SELECT reason FROM ended_session WHERE token_hash = \(tokenHash)", logger: logger
        ).decode(String.self) {
            return .ended(SyncError.Reason(rawValue: reason))
        }
        return .unknown
    }

    public func touchSession(tokenHash: String, usedAt: Date, address: String) async throws {
        try await query(
            """
            UPDATE session SET last_used_at = \(usedAt.millisecondsSince1970), address = \(address)
            WHERE token_hash = \(tokenHash)
            """, logger: logger)
    }

    public func sessions(userRecordName: String) async throws -> [(tokenHash: String, session: StoredSession)] {
        try await query(
            """
            SELECT \(unescaped: Self.sessionColumns) FROM session WHERE user_record_name = \(userRecordName)
            ORDER BY created_at DESC, id
            """, logger: logger
        ).decode((String, String, String, String?, String?, Int64, Int64).self).map {
            (hash, id, user, label, address, created, used) in
            (
                tokenHash: hash,
                session: StoredSession(
                    userRecordName: user, createdAt: Date(millisecondsSince1970: created),
                    lastUsedAt: Date(millisecondsSince1970: used), id: id, label: label, address: address)
            )
        }
    }

    public func expireSessions(lastUsedBefore: Date, createdBefore: Date, at now: Date) async throws -> Int {
        try await query(
            """
            WITH ended AS (
                DELETE FROM session
                WHERE last_used_at < \(lastUsedBefore.millisecondsSince1970)
                    OR created_at < \(createdBefore.millisecondsSince1970)
                RETURNING token_hash, user_record_name
            )
            INSERT INTO ended_session (token_hash, user_record_name, reason, ended_at)
            SELECT token_hash, user_record_name, \(SyncError.Reason.sessionExpired.rawValue),
                \(now.millisecondsSince1970) FROM ended
            ON CONFLICT (token_hash) DO UPDATE SET reason = EXCLUDED.reason, ended_at = EXCLUDED.ended_at
            RETURNING 1
            """, logger: logger
        ).count
    }

    public func forgetEndedSessions(endedBefore: Date) async throws -> Int {
        try await query(
            "DELETE FROM ended_session WHERE ended_at < \(endedBefore.millisecondsSince1970) RETURNING 1",
            logger: logger
        ).count
    }

    public func setDisabled(_ disabled: Bool, userRecordName: String) async throws -> Bool {
        try await !query(
            """
            UPDATE account SET disabled = \(disabled) WHERE user_record_name = \(userRecordName) RETURNING 1
            """, logger: logger
        ).isEmpty
    }

    public func accountSummaries() async throws -> [AccountSummary] {
        try await query(
            """
            SELECT a.user_record_name, a.username, a.created_at, a.disabled,
                (SELECT COUNT(*) FROM session s WHERE s.user_record_name = a.user_record_name)
            FROM account a ORDER BY a.username_folded, a.user_record_name
            """, logger: logger
        ).decode((String, String, Int64, Bool, Int64).self).map { name, username, created, disabled, sessions in
            AccountSummary(
                userRecordName: name, username: username, createdAt: Date(millisecondsSince1970: created),
                sessionCount: Int(sessions), isDisabled: disabled)
        }
    }

}
