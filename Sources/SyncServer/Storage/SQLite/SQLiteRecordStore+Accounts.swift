import Foundation
import GRDB
import SyncCore

/// Sessions, ended sessions, disabled and deleted accounts in the SQLite file (schema version 5).
extension SQLiteRecordStore {
    public func createSession(_ session: StoredSession, tokenHash: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO session (token_hash, id, user_record_name, label, address, created_at, last_used_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    tokenHash, session.id, session.userRecordName, session.label, session.address,
                    session.createdAt.millisecondsSince1970, session.lastUsedAt.millisecondsSince1970,
                ])
        }
    }

    public func sessionState(tokenHash: String) async throws -> SessionState {
        try await pool.read { db in
            if let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT s.*, a.disabled FROM session s JOIN account a ON a.user_record_name = s.user_record_name
                    WHERE s.token_hash = ?
                    """, arguments: [tokenHash])
            {
                return .live(Self.session(from: row), accountDisabled: row["disabled"])
            }
            if let reason = try String.fetchOne(
                db, sql: "SELECT reason FROM ended_session WHERE token_hash = ?", arguments: [tokenHash])
            {
                return .ended(SyncError.Reason(rawValue: reason))
            }
            return .unknown
        }
    }

    public func touchSession(tokenHash: String, usedAt: Date, address: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE session SET last_used_at = ?, address = ? WHERE token_hash = ?",
                arguments: [usedAt.millisecondsSince1970, address, tokenHash])
        }
    }

    public func sessions(userRecordName: String) async throws -> [(tokenHash: String, session: StoredSession)] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM session WHERE user_record_name = ? ORDER BY created_at DESC, id",
                arguments: [userRecordName]
            ).map { (tokenHash: $0["token_hash"], session: Self.session(from: $0)) }
        }
    }

    public func expireSessions(lastUsedBefore: Date, createdBefore: Date, at now: Date) async throws -> Int {
        try await pool.write { db in
            let condition = "COALESCE(last_used_at, created_at) < ? OR created_at < ?"
            let arguments: StatementArguments = [
                lastUsedBefore.millisecondsSince1970, createdBefore.millisecondsSince1970,
            ]
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO ended_session (token_hash, user_record_name, reason, ended_at)
                    SELECT token_hash, user_record_name, ?, ? FROM session WHERE \(condition)
                    """,
                arguments: [SyncError.Reason.sessionExpired.rawValue, now.millisecondsSince1970] + arguments)
            try db.execute(sql: "DELETE FROM session WHERE \(condition)", arguments: arguments)
            return db.changesCount
        }
    }

    public func forgetEndedSessions(endedBefore: Date) async throws -> Int {
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM ended_session WHERE ended_at < ?", arguments: [endedBefore.millisecondsSince1970])
            return db.changesCount
        }
    }

    public func setDisabled(_ disabled: Bool, userRecordName: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE account SET disabled = ? WHERE user_record_name = ?",
                arguments: [disabled, userRecordName])
            return db.changesCount > 0
        }
    }

    public func accountSummaries() async throws -> [AccountSummary] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT a.user_record_name, a.username, a.created_at, a.disabled,
                        (SELECT COUNT(*) FROM session s WHERE s.user_record_name = a.user_record_name) AS sessions
                    FROM account a ORDER BY a.username COLLATE NOCASE, a.user_record_name
                    """
            ).map { row in
                AccountSummary(
                    userRecordName: row["user_record_name"], username: row["username"],
                    createdAt: Date(millisecondsSince1970: row["created_at"]), sessionCount: row["sessions"],
                    isDisabled: row["disabled"])
            }
        }
    }

    // MARK: Rows

    /// A `session` row as a ``StoredSession``.
    static func session(from row: Row) -> StoredSession {
        let created = Date(millisecondsSince1970: row["created_at"])
        let used: Int64? = row["last_used_at"]
        return StoredSession(
            userRecordName: row["user_record_name"], createdAt: created,
            lastUsedAt: used.map(Date.init(millisecondsSince1970:)) ?? created, id: row["id"] ?? "",
            label: row["label"], address: row["address"])
    }
}
