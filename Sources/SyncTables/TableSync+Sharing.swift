import Foundation
import GRDB
import SyncKit

/// Sharing a row, and the rows below it through their foreign keys.
extension TableSync {
    /// Shares the row `key` of `table` with the accounts `usernames` (each must have synced once, so that
    /// the row's keys can be wrapped to theirs), with its children: every row whose parent column leads
    /// to it. Sends the row first if the server does not have it yet. Returns the invitation to hand over.
    @discardableResult
    public func share(
        _ table: String, key: String, with usernames: [String], permission: ShareParticipant.Permission = .readWrite
    ) async throws -> ShareInvitation {
        guard let schema = schema(table) else {
            throw TableSyncError.refused("\(table) is not a synced table; declare it to share its rows")
        }
        if try await stored(schema, key) == nil { try await sendChanges() }
        guard let root = try await stored(schema, key) else {
            throw TableSyncError.refused(
                "\(table) \(key) is not on the server yet (see pendingChanges() for why); sync, then share it")
        }
        guard root.recordID.zoneID.ownerName == RecordZone.ID.defaultOwnerName else {
            throw TableSyncError.refused("\(table) \(key) was shared with you; only its owner can share it")
        }
        let identities = try await container.userIdentities(forUsernames: usernames)
        var invitees: [SaveShareRequest.Invitee] = []
        for username in usernames {
            switch identities[username] {
            case .success(let account)?:
                invitees.append(.init(userRecordName: account.userRecordName, permission: permission))
            case .failure(let error)?:
                throw TableSyncError.refused("cannot share with \(username): \(error)")
            case nil:
                throw TableSyncError.refused("the server knows no account \(username); check the name")
            }
        }
        let record = Record(root)
        let (share, invitation) = try await container.share(record, with: invitees)
        let saved = record.value
        try await database.write { db in
            try db.execute(
                sql: """
                    UPDATE synctables_metadata SET systemFields = ?, shareRecordName = ? WHERE tableName = ? AND recordName = ?
                    """,
                arguments: [MetadataCoding.encode(saved.systemFields), share.recordName, table, key])
        }
        return invitation
    }

    /// Accepts a share: its rows (and their children) arrive with the next fetch, which this starts.
    public func acceptShare(_ invitation: ShareInvitation) async throws {
        let metadata = try await container.accept(invitation)
        try await database.write { db in
            try self.setPermission(
                metadata.participantPermission == .readWrite ? "readWrite" : "readOnly", zone: metadata.share.zoneID,
                db)
        }
        try await running().shared.fetchChanges()
    }

    /// The row's record as the server last returned it, or nil when it has none.
    private func stored(_ schema: TableSchema, _ key: String) async throws -> RecordValue? {
        try await database.read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql:
                        "SELECT systemFields, serverFields FROM synctables_metadata WHERE tableName = ? AND recordName = ?",
                    arguments: [schema.name, key]), let system = MetadataCoding.systemFields(row["systemFields"])
            else { return nil }
            return UnappliedRecord.Stored(
                systemFields: system, fields: MetadataCoding.serverFields(row["serverFields"]) ?? ServerFields()
            ).record
        }
    }
}
