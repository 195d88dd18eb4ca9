import Foundation
import GRDB
import SyncCore
import SyncKit

/// Other accounts' public keys as this device saw them (``KnownKey``), whether the person verified each,
/// a verified key the server no longer gives (refused until verified again), and the notices of changed
/// keys not yet shown.
extension ContactStore {
    /// The key this device knows for an account, or nil.
    package func knownKey(_ userRecordName: String) throws -> KnownKey? {
        try queue.read { db in try Self.knownKey(userRecordName, db) }
    }

    /// The key kept for `account` as ``KnownKeys/load`` wants it: by user record name, else a verified one
    /// kept for the same username under another record name.
    package func knownKey(for account: AccountInfo) throws -> KnownKey? {
        try queue.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT * FROM knownKey
                    WHERE userRecordName = ? OR (username = ? COLLATE NOCASE AND verifiedAt IS NOT NULL)
                    ORDER BY userRecordName = ? DESC LIMIT 1
                    """, arguments: [account.userRecordName, account.username, account.userRecordName]
            ).map(Self.knownKey)
        }
    }

    /// Every key this device knows, by user record name.
    package func knownKeys() throws -> [String: KnownKey] {
        try queue.read { db in
            var keys: [String: KnownKey] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM knownKey") {
                let key = Self.knownKey(row)
                keys[key.userRecordName] = key
            }
            return keys
        }
    }

    /// The accounts whose verified key the server no longer gives: nothing is shared with them or accepted
    /// from them until the person verifies again. By username.
    package func refusedKeys() throws -> [KeyChange] {
        try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM knownKey WHERE refusedKey IS NOT NULL ORDER BY username")
                .compactMap {
                    row in
                    let known = Self.knownKey(row)
                    guard let refused = known.refusedKey else { return nil }
                    let current = KnownKey(
                        userRecordName: known.userRecordName, username: known.username, publicKey: refused)
                    return KeyChange(previous: known, current: current)
                }
        }
    }

    /// Keeps the key seen for an account, its refusal (if any) as the key says.
    package func saveKnownKey(_ key: KnownKey) throws {
        try write { transaction in try Self.putKnownKey(key, transaction.db) }
    }

    static func putKnownKey(_ key: KnownKey, _ db: GRDB.Database) throws {
        let notice = try String.fetchOne(
            db, sql: "SELECT notice FROM knownKey WHERE userRecordName = ?", arguments: [key.userRecordName])
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO knownKey (userRecordName, username, publicKey, verifiedAt, refusedKey, notice)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                key.userRecordName, key.username, key.publicKey, key.verifiedAt?.timeIntervalSince1970,
                key.refusedKey, notice,
            ])
    }

    /// A verification another device of the account made (its record fetched): kept when it is newer than
    /// what this device knows of that account, so that every device refuses what the person refused.
    static func mergeVerification(_ record: RecordValue, _ db: GRDB.Database) throws {
        guard let fetched = VerifiedKeyRecord.knownKey(in: record), let verifiedAt = fetched.verifiedAt else { return }
        try putServerRecord(record, named: record.recordID.recordName, db)
        if let kept = try knownKey(fetched.userRecordName, db), let keptAt = kept.verifiedAt, keptAt >= verifiedAt {
            return
        }
        try putKnownKey(fetched, db)
    }

    /// Notes a changed key: a refused one is kept beside the verified one until the person verifies; either
    /// leaves a notice for the next command or screen to show.
    package func noteKeyChange(_ change: KeyChange) throws {
        try write { transaction in
            try transaction.db.execute(
                sql: "UPDATE knownKey SET refusedKey = ?, notice = ? WHERE userRecordName = ?",
                arguments: [
                    change.isRefused ? change.current.publicKey : nil, change.description,
                    change.previous.userRecordName,
                ])
        }
    }

    /// The notices of changed keys not shown yet, which are then marked shown.
    package func takeKeyNotices() throws -> [String] {
        try write { transaction in
            let db = transaction.db
            let notices = try String.fetchAll(
                db, sql: "SELECT notice FROM knownKey WHERE notice IS NOT NULL ORDER BY username")
            if !notices.isEmpty { try db.execute(sql: "UPDATE knownKey SET notice = NULL WHERE notice IS NOT NULL") }
            return notices
        }
    }

    /// The keys the person verified.
    static func verifiedKeys(_ db: GRDB.Database) throws -> [KnownKey] {
        try Row.fetchAll(db, sql: "SELECT * FROM knownKey WHERE verifiedAt IS NOT NULL").map(knownKey)
    }

    static func knownKey(_ userRecordName: String, _ db: GRDB.Database) throws -> KnownKey? {
        try Row.fetchOne(db, sql: "SELECT * FROM knownKey WHERE userRecordName = ?", arguments: [userRecordName])
            .map(knownKey)
    }

    private static func knownKey(_ row: Row) -> KnownKey {
        KnownKey(
            userRecordName: row["userRecordName"], username: row["username"], publicKey: row["publicKey"],
            verifiedAt: (row["verifiedAt"] as Double?).map { Date(timeIntervalSince1970: $0) },
            refusedKey: row["refusedKey"])
    }
}
