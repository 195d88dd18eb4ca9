import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Shares in PostgreSQL: a row per share, a row per participant. Every change to a share runs under
/// its owner's account lock, as every other change to the owner's data does.
extension PostgresRecordStore: ShareStore {
    public func saveShare(
        owner: String, zoneName: String, recordName: String, root: ShareRoot?, now: Date,
        _ change: @escaping @Sendable (StoredShare?) throws -> StoredShare
    ) async throws -> StoredShare {
        try await transaction { connection in
            let logger = self.logger
            _ = try await Self.lockAccount(connection, owner: owner, logger: logger)
            guard try await Self.zoneIsLive(connection, owner: owner, zoneName: zoneName, logger: logger) else {
                throw SyncError(.zoneNotFound, "zone '\(zoneName)' does not exist; save the zone before sharing it")
            }
            let existing = try await Self.loadShares(
                connection, owner: owner, zoneName: zoneName, recordName: recordName, logger: logger
            ).first
            func stored(_ name: String) async throws -> StoredRecord? {
                try await Self.records(
                    connection,
                    """
                    SELECT \(unescaped: StoredRecord.columns) FROM record
                    WHERE owner = \(owner) AND zone_name = \(zoneName) AND record_name = \(name)
                    """, logger: logger
                ).first
            }
            var storedRoot: StoredRecord?
            if let root { storedRoot = try await stored(root.record.recordID.recordName) }
            let place = SharePlace(saving: recordName, in: zoneName, existing: existing, root: root)
            try ShareRules.checkSave(
                place, existing: existing,
                zoneShares: try await Self.loadShares(connection, owner: owner, zoneName: zoneName, logger: logger),
                root: root?.record, storedRoot: storedRoot, atName: try await stored(recordName))
            if let root {
                let usage = try await Self.storageUsage(
                    connection, owner: owner, defaultQuotaBytes: self.defaultQuotaBytes, logger: logger)
                try await Self.saveRoot(
                    root, shareName: recordName, owner: owner, now: now, usage: usage, connection, logger: logger)
            }
            let share = try change(existing)
            try await Self.write(share, actor: owner, now: now, connection, logger: logger)
            return share
        }
    }

    public func updateShare(
        token: String, actor: String, now: Date, _ change: @escaping @Sendable (StoredShare) throws -> StoredShare
    ) async throws -> StoredShare {
        try await transaction { connection in
            var place: (owner: String, zoneName: String, recordName: String)?
            for try await (owner, zoneName, recordName) in try await connection.query(
                "SELECT owner, zone_name, record_name FROM share WHERE token = \(token)", logger: self.logger
            ).decode((String, String, String).self) {
                place = (owner, zoneName, recordName)
            }
            guard let place else { throw ShareRules.notOpen }
            _ = try await Self.lockAccount(connection, owner: place.owner, logger: self.logger)
            // Read again under the lock: the share may have changed or gone meanwhile.
            guard
                let stored = try await Self.loadShares(
                    connection, owner: place.owner, zoneName: place.zoneName, recordName: place.recordName,
                    logger: self.logger
                ).first, stored.token == token
            else { throw ShareRules.notOpen }
            let share = try change(stored)
            try await Self.write(share, actor: actor, now: now, connection, logger: self.logger)
            return share
        }
    }

    public func deleteShare(owner: String, zoneName: String, recordName: String, now: Date) async throws
        -> StoredShare?
    {
        try await transaction { connection in
            let logger = self.logger
            _ = try await Self.lockAccount(connection, owner: owner, logger: logger)
            guard
                let share = try await Self.loadShares(
                    connection, owner: owner, zoneName: zoneName, recordName: recordName, logger: logger
                ).first
            else { return nil }
            try await Self.deleteShareRows(
                connection, owner: owner, zoneName: zoneName, recordName: recordName, logger: logger)
            if let rootName = share.rootRecordName,
                let root = try await Self.records(
                    connection,
                    """
                    SELECT \(unescaped: StoredRecord.columns) FROM record
                    WHERE owner = \(owner) AND zone_name = \(zoneName) AND record_name = \(rootName) AND NOT deleted
                    """, logger: logger
                ).first
            {
                // The root stays, no longer shared: a new version without its `share`.
                let record = try root.record(in: RecordZone.ID(zoneName: zoneName))
                try await Self.saveRoot(
                    ShareRoot(record: record, limits: ServerLimits(maximumRecordBytes: .max)), shareName: nil,
                    owner: owner, now: now, connection, logger: logger)
            }
            try await Self.writeShareRecord(
                nil, at: SharePlace(share), owner: owner, actor: owner, now: now, connection, logger: logger)
            return share
        }
    }

    public func share(owner: String, zoneName: String, recordName: String) async throws -> StoredShare? {
        try await snapshot { connection in
            try await Self.loadShares(
                connection, owner: owner, zoneName: zoneName, recordName: recordName, logger: self.logger
            ).first
        }
    }

    public func shares(owner: String, zoneName: String) async throws -> [StoredShare] {
        try await snapshot { connection in
            try await Self.loadShares(connection, owner: owner, zoneName: zoneName, logger: self.logger)
        }
    }

    public func share(token: String) async throws -> StoredShare? {
        try await snapshot { connection in
            for try await (owner, zoneName, recordName) in try await connection.query(
                "SELECT owner, zone_name, record_name FROM share WHERE token = \(token)", logger: self.logger
            ).decode((String, String, String).self) {
                return try await Self.loadShares(
                    connection, owner: owner, zoneName: zoneName, recordName: recordName, logger: self.logger
                ).first
            }
            return nil
        }
    }

    public func sharedZones(user: String) async throws -> [SharedZone] {
        var rows: [(zone: SharedZone, root: String?, shareRecordName: String)] = []
        for (owner, zoneName, shareName, root, permission, version, wrapped, sharedVersion, shared, seq)
            in try await query(
                """
                SELECT p.owner, p.zone_name, p.share_name, s.root_record_name, p.permission, p.key_version,
                    p.wrapped_key, p.shared_key_version, p.shared_key, z.change_seq
                FROM share_participant p
                JOIN share s ON s.owner = p.owner AND s.zone_name = p.zone_name AND s.record_name = p.share_name
                JOIN zone z ON z.owner = p.owner AND z.zone_name = p.zone_name AND NOT z.deleted
                WHERE p.user_record_name = \(user) AND p.status = 'accepted' AND p.role <> 'owner'
                ORDER BY p.owner COLLATE "C", p.zone_name COLLATE "C", p.share_name COLLATE "C"
                """, logger: logger
            ).decode((String, String, String, String?, String, Int64?, Data?, Int64?, Data?, Int64).self)
        {
            let zone = SharedZone(
                owner: owner, zoneName: zoneName,
                permission: ShareParticipant.Permission(rawValue: permission) ?? .none,
                encryptionKey: RecordZone.EncryptionKey(storedVersion: version, wrapped: wrapped),
                sharedKey: RecordZone.EncryptionKey(storedVersion: sharedVersion, wrapped: shared), changeSeq: seq)
            rows.append((zone, root, shareName))
        }
        return SharedZone.gathering(rows)
    }

    public func audience(owner: String, zoneNames: Set<String>) async throws -> Set<String> {
        guard !zoneNames.isEmpty else { return [] }
        var users = Set<String>()
        for (user, ) in try await query(
            """
            SELECT DISTINCT user_record_name FROM share_participant
            WHERE owner = \(owner) AND zone_name = ANY(\(Array(zoneNames))) AND status = 'accepted' AND role <> 'owner'
            """, logger: logger
        ).decode((String,).self) {
            users.insert(user)
        }
        return users
    }

    // MARK: Rows

    /// Deletes a zone's shares' rows: one share's, or every share's when `recordName` is nil.
    static func deleteShareRows(
        _ connection: PostgresConnection, owner: String, zoneName: String, recordName: String? = nil, logger: Logger
    ) async throws {
        // NULL names every share of the zone.
        try await connection.query(
            """
            DELETE FROM share_participant WHERE owner = \(owner) AND zone_name = \(zoneName)
                AND (\(recordName)::text IS NULL OR share_name = \(recordName))
            """, logger: logger)
        try await connection.query(
            """
            DELETE FROM share WHERE owner = \(owner) AND zone_name = \(zoneName)
                AND (\(recordName)::text IS NULL OR record_name = \(recordName))
            """, logger: logger)
    }

    /// A zone's shares: the one named `recordName`, or every one when it is nil.
    private static func loadShares(
        _ connection: PostgresConnection, owner: String, zoneName: String, recordName: String? = nil, logger: Logger
    ) async throws -> [StoredShare] {
        var shares: [StoredShare] = []
        for try await (name, root, token, publicPermission, version, wrapped) in try await connection.query(
            """
            SELECT record_name, root_record_name, token, public_permission, invitation_key_version, invitation_key
            FROM share
            WHERE owner = \(owner) AND zone_name = \(zoneName) AND (\(recordName)::text IS NULL OR record_name = \(recordName))
            ORDER BY record_name COLLATE "C"
            """, logger: logger
        ).decode((String, String?, String, String, Int64?, Data?).self) {
            shares.append(
                StoredShare(
                    owner: owner, zoneName: zoneName, recordName: name, rootRecordName: root, token: token,
                    publicPermission: ShareParticipant.Permission(rawValue: publicPermission) ?? .none,
                    invitationKey: RecordZone.EncryptionKey(storedVersion: version, wrapped: wrapped),
                    participants: []))
        }
        for index in shares.indices {
            for try await (user, username, role, permission, status, version, wrapped, sharedVersion, shared)
                in try await connection.query(
                    """
                    SELECT user_record_name, username, role, permission, status, key_version, wrapped_key,
                        shared_key_version, shared_key
                    FROM share_participant
                    WHERE owner = \(owner) AND zone_name = \(zoneName) AND share_name = \(shares[index].recordName)
                    ORDER BY position
                    """, logger: logger
                ).decode((String, String, String, String, String, Int64?, Data?, Int64?, Data?).self)
            {
                shares[index].participants.append(
                    StoredParticipant(
                        userRecordName: user, username: username,
                        role: ShareParticipant.Role(rawValue: role) ?? .privateUser,
                        permission: ShareParticipant.Permission(rawValue: permission) ?? .none,
                        status: ShareParticipant.AcceptanceStatus(rawValue: status) ?? .removed,
                        encryptionKey: RecordZone.EncryptionKey(storedVersion: version, wrapped: wrapped),
                        sharedKey: RecordZone.EncryptionKey(storedVersion: sharedVersion, wrapped: shared)))
            }
        }
        return shares
    }

    /// Replaces the share's rows with `share` and writes its record.
    private static func write(
        _ share: StoredShare, actor: String, now: Date, _ connection: PostgresConnection, logger: Logger
    ) async throws {
        try await deleteShareRows(
            connection, owner: share.owner, zoneName: share.zoneName, recordName: share.recordName, logger: logger)
        try await connection.query(
            """
            INSERT INTO share (owner, zone_name, record_name, root_record_name, token, public_permission,
                invitation_key_version, invitation_key)
            VALUES (\(share.owner), \(share.zoneName), \(share.recordName), \(share.rootRecordName), \(share.token),
                \(share.publicPermission.rawValue), \(share.invitationKey.map { Int64($0.keyVersion) }),
                \(share.invitationKey?.wrappedKey))
            """, logger: logger)
        for (position, participant) in share.participants.enumerated() {
            try await connection.query(
                """
                INSERT INTO share_participant (owner, zone_name, share_name, position, user_record_name, username,
                    role, permission, status, key_version, wrapped_key, shared_key_version, shared_key)
                VALUES (\(share.owner), \(share.zoneName), \(share.recordName), \(Int64(position)),
                    \(participant.userRecordName), \(participant.username), \(participant.role.rawValue),
                    \(participant.permission.rawValue), \(participant.status.rawValue),
                    \(participant.encryptionKey.map { Int64($0.keyVersion) }), \(participant.encryptionKey?.wrappedKey),
                    \(participant.sharedKey.map { Int64($0.keyVersion) }), \(participant.sharedKey?.wrappedKey))
                """, logger: logger)
        }
        try await writeShareRecord(
            share, at: SharePlace(share), owner: share.owner, actor: actor, now: now, connection, logger: logger)
    }

    /// Saves a record-hierarchy share's root as the owner's change, with `shareName` as its share
    /// (nil: no longer shared); throws the save's error when it cannot be saved.
    /// A root saved with a new share counts against the owner's quota (`usage`); one left as the
    /// share goes (nil) always passes.
    private static func saveRoot(
        _ root: ShareRoot, shareName: String?, owner: String, now: Date, usage: StorageUsage? = nil,
        _ connection: PostgresConnection, logger: Logger
    ) async throws {
        var hierarchy = RecordHierarchy.Context()
        hierarchy.shareNames[RecordKey(root.record.recordID)] = .some(shareName)
        let request = ModifyRecordsRequest(
            saves: [root.record], savePolicy: shareName == nil ? .allKeys : .ifServerRecordUnchanged)
        let currentSeq = try await lockAccount(connection, owner: owner, logger: logger).current
        let plan = try await plan(
            request, owner: owner, modifier: owner, writer: "", limits: root.limits, now: now, currentSeq: currentSeq,
            savedFields: nil, hierarchy: hierarchy, usage: usage, connection, logger: logger)
        if let failure = plan.failedSaves.first { throw failure.error }
        try await apply(plan, owner: owner, now: now, connection, logger: logger)
    }

    /// Writes the share's record (its tombstone for nil) as the owner's next change.
    private static func writeShareRecord(
        _ share: StoredShare?, at place: SharePlace, owner: String, actor: String, now: Date,
        _ connection: PostgresConnection, logger: Logger
    ) async throws {
        let seq = try await lockAccount(connection, owner: owner, logger: logger).current + 1
        let previous = try await records(
            connection,
            """
            SELECT \(unescaped: StoredRecord.columns) FROM record
            WHERE owner = \(owner) AND zone_name = \(place.zoneName) AND record_name = \(place.recordName)
            """, logger: logger
        ).first
        let row = ShareRules.record(
            of: share, at: place, previous: previous, actor: actor, seq: seq, now: now.millisecondsSince1970)
        try await upsert([row], owner: owner, connection, logger: logger)
        try await connection.query(
            """
            UPDATE zone SET change_seq = \(seq), modified_at = \(now.millisecondsSince1970)
            WHERE owner = \(owner) AND zone_name = \(place.zoneName)
            """, logger: logger)
        try await setChangeSeq(connection, owner: owner, seq: seq, logger: logger)
    }
}
