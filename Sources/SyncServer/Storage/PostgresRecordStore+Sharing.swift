import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Zone-wide shares in PostgreSQL: a row per share, a row per participant. Every change to a share
/// runs under its owner's account lock, as every other change to the owner's data does.
extension PostgresRecordStore: ShareStore {
    public func saveShare(
        owner: String, zoneName: String, now: Date, _ change: @escaping @Sendable (StoredShare?) throws -> StoredShare
    ) async throws -> StoredShare {
        try await transaction { connection in
            let seq = try await Self.lockAccount(connection, owner: owner, logger: self.logger).current
            guard try await Self.zoneIsLive(connection, owner: owner, zoneName: zoneName, logger: self.logger) else {
                throw SyncError(.zoneNotFound, "zone '\(zoneName)' does not exist; save the zone before sharing it")
            }
            let stored = try await Self.loadShare(connection, owner: owner, zoneName: zoneName, logger: self.logger)
            let share = try change(stored)
            try await Self.write(share, actor: owner, seq: seq + 1, now: now, connection, logger: self.logger)
            return share
        }
    }

    public func updateShare(
        token: String, actor: String, now: Date, _ change: @escaping @Sendable (StoredShare) throws -> StoredShare
    ) async throws -> StoredShare {
        try await transaction { connection in
            var place: (owner: String, zoneName: String)?
            for try await (owner, zoneName) in try await connection.query(
                "SELECT owner, zone_name FROM share WHERE token = \(token)", logger: self.logger
            ).decode((String, String).self) {
                place = (owner, zoneName)
            }
            guard let place else { throw ShareRules.notOpen }
            let seq = try await Self.lockAccount(connection, owner: place.owner, logger: self.logger).current
            // Read again under the lock: the share may have changed or gone meanwhile.
            guard
                let stored = try await Self.loadShare(
                    connection, owner: place.owner, zoneName: place.zoneName, logger: self.logger),
                stored.token == token
            else { throw ShareRules.notOpen }
            let share = try change(stored)
            try await Self.write(share, actor: actor, seq: seq + 1, now: now, connection, logger: self.logger)
            return share
        }
    }

    public func deleteShare(owner: String, zoneName: String, now: Date) async throws -> StoredShare? {
        try await transaction { connection in
            let seq = try await Self.lockAccount(connection, owner: owner, logger: self.logger).current
            guard
                let share = try await Self.loadShare(
                    connection, owner: owner, zoneName: zoneName, logger: self.logger)
            else { return nil }
            try await Self.deleteShareRows(connection, owner: owner, zoneName: zoneName, logger: self.logger)
            try await Self.writeShareRecord(
                nil, owner: owner, zoneName: zoneName, actor: owner, seq: seq + 1, now: now, connection,
                logger: self.logger)
            return share
        }
    }

    public func share(owner: String, zoneName: String) async throws -> StoredShare? {
        try await snapshot { connection in
            try await Self.loadShare(connection, owner: owner, zoneName: zoneName, logger: self.logger)
        }
    }

    public func share(token: String) async throws -> StoredShare? {
        try await snapshot { connection in
            for try await (owner, zoneName) in try await connection.query(
                "SELECT owner, zone_name FROM share WHERE token = \(token)", logger: self.logger
            ).decode((String, String).self) {
                return try await Self.loadShare(connection, owner: owner, zoneName: zoneName, logger: self.logger)
            }
            return nil
        }
    }

    public func sharedZones(user: String) async throws -> [SharedZone] {
        var zones: [SharedZone] = []
        for (owner, zoneName, permission, version, wrapped, seq) in try await query(
            """
            SELECT p.owner, p.zone_name, p.permission, p.key_version, p.wrapped_key, z.change_seq
            FROM share_participant p
            JOIN zone z ON z.owner = p.owner AND z.zone_name = p.zone_name AND NOT z.deleted
            WHERE p.user_record_name = \(user) AND p.status = 'accepted' AND p.role <> 'owner'
            ORDER BY p.owner COLLATE "C", p.zone_name COLLATE "C"
            """, logger: logger
        ).decode((String, String, String, Int64?, Data?, Int64).self) {
            zones.append(
                SharedZone(
                    owner: owner, zoneName: zoneName,
                    permission: ShareParticipant.Permission(rawValue: permission) ?? .none,
                    encryptionKey: RecordZone.EncryptionKey(storedVersion: version, wrapped: wrapped), changeSeq: seq))
        }
        return zones
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

    static func deleteShareRows(_ connection: PostgresConnection, owner: String, zoneName: String, logger: Logger)
        async throws
    {
        try await connection.query(
            "DELETE FROM share_participant WHERE owner = \(owner) AND zone_name = \(zoneName)", logger: logger)
        try await connection.query(
            "DELETE FROM share WHERE owner = \(owner) AND zone_name = \(zoneName)", logger: logger)
    }

    private static func loadShare(
        _ connection: PostgresConnection, owner: String, zoneName: String, logger: Logger
    ) async throws -> StoredShare? {
        var share: StoredShare?
        for try await (token, publicPermission, version, wrapped) in try await connection.query(
            """
            SELECT token, public_permission, invitation_key_version, invitation_key FROM share
            WHERE owner = \(owner) AND zone_name = \(zoneName)
            """, logger: logger
        ).decode((String, String, Int64?, Data?).self) {
            share = StoredShare(
                owner: owner, zoneName: zoneName, token: token,
                publicPermission: ShareParticipant.Permission(rawValue: publicPermission) ?? .none,
                invitationKey: RecordZone.EncryptionKey(storedVersion: version, wrapped: wrapped), participants: [])
        }
        guard var share else { return nil }
        for try await (user, username, role, permission, status, version, wrapped) in try await connection.query(
            """
            SELECT user_record_name, username, role, permission, status, key_version, wrapped_key
            FROM share_participant WHERE owner = \(owner) AND zone_name = \(zoneName) ORDER BY position
            """, logger: logger
        ).decode((String, String, String, String, String, Int64?, Data?).self) {
            share.participants.append(
                StoredParticipant(
                    userRecordName: user, username: username,
                    role: ShareParticipant.Role(rawValue: role) ?? .privateUser,
                    permission: ShareParticipant.Permission(rawValue: permission) ?? .none,
                    status: ShareParticipant.AcceptanceStatus(rawValue: status) ?? .removed,
                    encryptionKey: RecordZone.EncryptionKey(storedVersion: version, wrapped: wrapped)))
        }
        return share
    }

    /// Replaces the share's rows with `share` and writes its record at `seq`.
    private static func write(
        _ share: StoredShare, actor: String, seq: Int64, now: Date, _ connection: PostgresConnection, logger: Logger
    ) async throws {
        try await deleteShareRows(connection, owner: share.owner, zoneName: share.zoneName, logger: logger)
        try await connection.query(
            """
            INSERT INTO share (owner, zone_name, token, public_permission, invitation_key_version, invitation_key)
            VALUES (\(share.owner), \(share.zoneName), \(share.token), \(share.publicPermission.rawValue),
                \(share.invitationKey.map { Int64($0.keyVersion) }), \(share.invitationKey?.wrappedKey))
            """, logger: logger)
        for (position, participant) in share.participants.enumerated() {
            try await connection.query(
                """
                INSERT INTO share_participant (owner, zone_name, position, user_record_name, username, role,
                    permission, status, key_version, wrapped_key)
                VALUES (\(share.owner), \(share.zoneName), \(Int64(position)), \(participant.userRecordName),
                    \(participant.username), \(participant.role.rawValue), \(participant.permission.rawValue),
                    \(participant.status.rawValue), \(participant.encryptionKey.map { Int64($0.keyVersion) }),
                    \(participant.encryptionKey?.wrappedKey))
                """, logger: logger)
        }
        try await writeShareRecord(
            share, owner: share.owner, zoneName: share.zoneName, actor: actor, seq: seq, now: now, connection,
            logger: logger)
    }

    /// Writes the share's record (its tombstone for nil) as the owner's change `seq`.
    private static func writeShareRecord(
        _ share: StoredShare?, owner: String, zoneName: String, actor: String, seq: Int64, now: Date,
        _ connection: PostgresConnection, logger: Logger
    ) async throws {
        let previous = try await records(
            connection,
            """
            SELECT \(unescaped: recordColumns) FROM record
            WHERE owner = \(owner) AND zone_name = \(zoneName) AND record_name = \(Share.zoneWideRecordName)
            """, logger: logger
        ).first
        let row = ShareRules.record(
            of: share, zoneName: zoneName, previous: previous, actor: actor, seq: seq, now: now.millisecondsSince1970)
        try await upsert([row], owner: owner, connection, logger: logger)
        try await connection.query(
            """
            UPDATE zone SET change_seq = \(seq), modified_at = \(now.millisecondsSince1970)
            WHERE owner = \(owner) AND zone_name = \(zoneName)
            """, logger: logger)
        try await setChangeSeq(connection, owner: owner, seq: seq, logger: logger)
    }
}
