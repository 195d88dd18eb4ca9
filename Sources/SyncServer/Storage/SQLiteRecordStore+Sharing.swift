import Foundation
import GRDB
import SyncCore

/// Shares in the SQLite file: a row per share, a row per participant (tables of migration v7, the
/// participants' shared keys of v11).
extension SQLiteRecordStore: ShareStore {
    static let shareTables = """
        CREATE TABLE share (
            owner TEXT NOT NULL,
            zone_name TEXT NOT NULL,
            token TEXT NOT NULL UNIQUE,
            public_permission TEXT NOT NULL,
            invitation_key_version INTEGER,
            invitation_key BLOB,
            PRIMARY KEY (owner, zone_name)
        ) WITHOUT ROWID;
        CREATE TABLE share_participant (
            owner TEXT NOT NULL,
            zone_name TEXT NOT NULL,
            position INTEGER NOT NULL,
            user_record_name TEXT NOT NULL,
            username TEXT NOT NULL,
            role TEXT NOT NULL,
            permission TEXT NOT NULL,
            status TEXT NOT NULL,
            key_version INTEGER,
            wrapped_key BLOB,
            PRIMARY KEY (owner, zone_name, user_record_name)
        ) WITHOUT ROWID;
        CREATE INDEX share_participant_by_user ON share_participant(user_record_name, status);
        """

    public func saveShare(
        owner: String, zoneName: String, recordName: String, root: ShareRoot?, now: Date,
        _ change: @escaping @Sendable (StoredShare?) throws -> StoredShare
    ) async throws -> StoredShare {
        try await pool.write { db in
            guard try Self.zoneIsLive(db, owner: owner, zoneName: zoneName) else {
                throw SyncError(.zoneNotFound, "zone '\(zoneName)' does not exist; save the zone before sharing it")
            }
            let existing = try Self.loadShare(db, owner: owner, zoneName: zoneName, recordName: recordName)
            func stored(_ name: String) throws -> StoredRecord? {
                try Row.fetchOne(
                    db,
                    sql:
                        "SELECT \(StoredRecord.columns) FROM record WHERE owner = ? AND zone_name = ? AND record_name = ?",
                    arguments: [owner, zoneName, name]
                ).map(Self.record(from:))
            }
            let storedRoot = try root.flatMap { try stored($0.record.recordID.recordName) }
            let place = SharePlace(saving: recordName, in: zoneName, existing: existing, root: root)
            try ShareRules.checkSave(
                place, existing: existing, zoneShares: try Self.loadShares(db, owner: owner, zoneName: zoneName),
                root: root?.record, storedRoot: storedRoot, atName: try stored(recordName))
            if let root {
                try Self.saveRoot(
                    root, shareName: recordName, owner: owner, now: now,
                    usage: try Self.storageUsage(db, owner: owner, defaultQuotaBytes: self.defaultQuotaBytes), db)
            }
            let share = try change(existing)
            try Self.write(share, actor: owner, now: now, db)
            return share
        }
    }

    public func updateShare(
        token: String, actor: String, now: Date, _ change: @escaping @Sendable (StoredShare) throws -> StoredShare
    ) async throws -> StoredShare {
        try await pool.write { db in
            guard let stored = try Self.loadShare(db, token: token) else { throw ShareRules.notOpen }
            let share = try change(stored)
            try Self.write(share, actor: actor, now: now, db)
            return share
        }
    }

    public func deleteShare(owner: String, zoneName: String, recordName: String, now: Date) async throws
        -> StoredShare?
    {
        try await pool.write { db in
            guard let share = try Self.loadShare(db, owner: owner, zoneName: zoneName, recordName: recordName) else {
                return nil
            }
            try Self.deleteShareRows(db, owner: owner, zoneName: zoneName, recordName: recordName)
            if let rootName = share.rootRecordName,
                let root = try Row.fetchOne(
                    db,
                    sql:
                        "SELECT \(StoredRecord.columns) FROM record WHERE owner = ? AND zone_name = ? AND record_name = ? AND deleted = 0",
                    arguments: [owner, zoneName, rootName]
                ).map(Self.record(from:))
            {
                // The root stays, no longer shared: a new version without its `share`.
                let record = try root.record(in: RecordZone.ID(zoneName: zoneName))
                try Self.saveRoot(
                    ShareRoot(record: record, limits: ServerLimits(maximumRecordBytes: .max)), shareName: nil,
                    owner: owner, now: now, db)
            }
            try Self.writeShareRecord(nil, at: SharePlace(share), owner: owner, actor: owner, now: now, db)
            return share
        }
    }

    public func share(owner: String, zoneName: String, recordName: String) async throws -> StoredShare? {
        try await pool.read { db in try Self.loadShare(db, owner: owner, zoneName: zoneName, recordName: recordName) }
    }

    public func shares(owner: String, zoneName: String) async throws -> [StoredShare] {
        try await pool.read { db in try Self.loadShares(db, owner: owner, zoneName: zoneName) }
    }

    public func share(token: String) async throws -> StoredShare? {
        try await pool.read { db in try Self.loadShare(db, token: token) }
    }

    public func sharedZones(user: String) async throws -> [SharedZone] {
        try await pool.read { db in
            SharedZone.gathering(
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT p.owner, p.zone_name, p.share_name, s.root_record_name, p.permission, p.key_version,
                            p.wrapped_key, p.shared_key_version, p.shared_key, z.change_seq
                        FROM share_participant p
                        JOIN share s ON s.owner = p.owner AND s.zone_name = p.zone_name AND s.record_name = p.share_name
                        JOIN zone z ON z.owner = p.owner AND z.zone_name = p.zone_name AND z.deleted = 0
                        WHERE p.user_record_name = ? AND p.status = 'accepted' AND p.role != 'owner'
                        ORDER BY p.owner, p.zone_name, p.share_name
                        """, arguments: [user]
                ).map { row in
                    let zone = SharedZone(
                        owner: row["owner"], zoneName: row["zone_name"],
                        permission: ShareParticipant.Permission(rawValue: row["permission"]) ?? .none,
                        encryptionKey: RecordZone.EncryptionKey(
                            storedVersion: row["key_version"], wrapped: row["wrapped_key"]),
                        sharedKey: RecordZone.EncryptionKey(
                            storedVersion: row["shared_key_version"], wrapped: row["shared_key"]),
                        changeSeq: row["change_seq"])
                    return (zone, row["root_record_name"], row["share_name"])
                })
        }
    }

    public func audience(owner: String, zoneNames: Set<String>) async throws -> Set<String> {
        guard !zoneNames.isEmpty else { return [] }
        return try await pool.read { db in
            var users = Set<String>()
            let statement = try db.cachedStatement(
                sql: """
                    SELECT user_record_name FROM share_participant
                    WHERE owner = ? AND zone_name = ? AND status = 'accepted' AND role != 'owner'
                    """)
            for zoneName in zoneNames {
                users.formUnion(try String.fetchAll(statement, arguments: [owner, zoneName]))
            }
            return users
        }
    }

    // MARK: Rows

    /// Deletes a zone's shares' rows: one share's, or every share's when `recordName` is nil.
    static func deleteShareRows(_ db: Database, owner: String, zoneName: String, recordName: String? = nil) throws {
        let which = recordName == nil ? "" : " AND share_name = ?"
        let arguments: StatementArguments = recordName.map { [owner, zoneName, $0] } ?? [owner, zoneName]
        try db.execute(
            sql: "DELETE FROM share_participant WHERE owner = ? AND zone_name = ?" + which, arguments: arguments)
        try db.execute(
            sql: "DELETE FROM share WHERE owner = ? AND zone_name = ?"
                + which.replacingOccurrences(of: "share_name", with: "record_name"),
            arguments: arguments)
    }

    private static func loadShare(_ db: Database, owner: String, zoneName: String, recordName: String) throws
        -> StoredShare?
    {
        try Row.fetchOne(
            db, sql: "SELECT * FROM share WHERE owner = ? AND zone_name = ? AND record_name = ?",
            arguments: [owner, zoneName, recordName]
        ).map { try share(from: $0, db) }
    }

    private static func loadShares(_ db: Database, owner: String, zoneName: String) throws -> [StoredShare] {
        try Row.fetchAll(
            db, sql: "SELECT * FROM share WHERE owner = ? AND zone_name = ? ORDER BY record_name",
            arguments: [owner, zoneName]
        ).map { try share(from: $0, db) }
    }

    private static func loadShare(_ db: Database, token: String) throws -> StoredShare? {
        try Row.fetchOne(db, sql: "SELECT * FROM share WHERE token = ?", arguments: [token]).map {
            try share(from: $0, db)
        }
    }

    private static func share(from row: Row, _ db: Database) throws -> StoredShare {
        let owner: String = row["owner"]
        let zoneName: String = row["zone_name"]
        let recordName: String = row["record_name"]
        let participants = try Row.fetchAll(
            db,
            sql: """
                SELECT * FROM share_participant WHERE owner = ? AND zone_name = ? AND share_name = ?
                ORDER BY position
                """,
            arguments: [owner, zoneName, recordName]
        ).map { row in
            StoredParticipant(
                userRecordName: row["user_record_name"], username: row["username"],
                role: ShareParticipant.Role(rawValue: row["role"]) ?? .privateUser,
                permission: ShareParticipant.Permission(rawValue: row["permission"]) ?? .none,
                status: ShareParticipant.AcceptanceStatus(rawValue: row["status"]) ?? .removed,
                encryptionKey: RecordZone.EncryptionKey(storedVersion: row["key_version"], wrapped: row["wrapped_key"]),
                sharedKey: RecordZone.EncryptionKey(
                    storedVersion: row["shared_key_version"], wrapped: row["shared_key"]))
        }
        return StoredShare(
            owner: owner, zoneName: zoneName, recordName: recordName, rootRecordName: row["root_record_name"],
            token: row["token"],
            publicPermission: ShareParticipant.Permission(rawValue: row["public_permission"]) ?? .none,
            invitationKey: RecordZone.EncryptionKey(
                storedVersion: row["invitation_key_version"], wrapped: row["invitation_key"]),
            participants: participants)
    }

    /// Replaces the share's rows with `share` and writes its record.
    private static func write(_ share: StoredShare, actor: String, now: Date, _ db: Database) throws {
        try deleteShareRows(db, owner: share.owner, zoneName: share.zoneName, recordName: share.recordName)
        try db.execute(
            sql: """
                INSERT INTO share (owner, zone_name, record_name, root_record_name, token, public_permission,
                    invitation_key_version, invitation_key)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                share.owner, share.zoneName, share.recordName, share.rootRecordName, share.token,
                share.publicPermission.rawValue, share.invitationKey?.keyVersion, share.invitationKey?.wrappedKey,
            ])
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO share_participant (owner, zone_name, share_name, position, user_record_name, username, role,
                    permission, status, key_version, wrapped_key, shared_key_version, shared_key)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        for (position, participant) in share.participants.enumerated() {
            try insert.execute(arguments: [
                share.owner, share.zoneName, share.recordName, position, participant.userRecordName,
                participant.username, participant.role.rawValue, participant.permission.rawValue,
                participant.status.rawValue, participant.encryptionKey?.keyVersion,
                participant.encryptionKey?.wrappedKey, participant.sharedKey?.keyVersion,
                participant.sharedKey?.wrappedKey,
            ])
        }
        try writeShareRecord(share, at: SharePlace(share), owner: share.owner, actor: actor, now: now, db)
    }

    /// Saves a record-hierarchy share's root as the owner's change, with `shareName` as its share
    /// (nil: no longer shared); throws the save's error when it cannot be saved.
    /// A root saved with a new share counts against the owner's quota (`usage`); one left as the
    /// share goes (nil) always passes.
    private static func saveRoot(
        _ root: ShareRoot, shareName: String?, owner: String, now: Date, usage: StorageUsage? = nil, _ db: Database
    ) throws {
        var hierarchy = RecordHierarchy.Context()
        hierarchy.shareNames[RecordKey(root.record.recordID)] = .some(shareName)
        let request = ModifyRecordsRequest(
            saves: [root.record], savePolicy: shareName == nil ? .allKeys : .ifServerRecordUnchanged)
        let plan = try plan(
            request, owner: owner, modifier: owner, writer: "", limits: root.limits, now: now, savedFields: nil,
            hierarchy: hierarchy, usage: usage, db)
        if let failure = plan.failedSaves.first { throw failure.error }
        try apply(plan, owner: owner, now: now, db)
    }

    /// Writes the share's record (its tombstone for nil) as the owner's next change.
    private static func writeShareRecord(
        _ share: StoredShare?, at place: SharePlace, owner: String, actor: String, now: Date, _ db: Database
    ) throws {
        let seq = try changeSeq(db, owner: owner) + 1
        let previous = try Row.fetchOne(
            db, sql: "SELECT \(StoredRecord.columns) FROM record WHERE owner = ? AND zone_name = ? AND record_name = ?",
            arguments: [owner, place.zoneName, place.recordName]
        ).map(record(from:))
        let row = ShareRules.record(
            of: share, at: place, previous: previous, actor: actor, seq: seq, now: now.millisecondsSince1970)
        try upsert([row], owner: owner, db)
        try db.execute(
            sql: "UPDATE zone SET change_seq = ?, modified_at = ? WHERE owner = ? AND zone_name = ?",
            arguments: [seq, now.millisecondsSince1970, owner, place.zoneName])
        try setChangeSeq(db, owner: owner, seq: seq)
    }
}
