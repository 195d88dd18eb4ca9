import Foundation
import GRDB
import Logging
import SyncKit
import Synchronization

/// The engines' delegate: what each event does to the database.
extension TableSync: SyncEngineDelegate {
    public func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
        let scope = syncEngine.database.scope
        switch event {
        case .stateUpdate(let update):
            do {
                let data = try JSONEncoder().encode(update.stateSerialization)
                try await database.write { db in try Self.setSetting("engine.\(scope)", data, db) }
            } catch {
                logger.error("saving the engine's state failed: \(error)")
            }
        case .accountChange(let change):
            if case .switchAccounts = change.changeType {
                // Another account's data must not sync into this one's.
                logger.notice("the account changed: this device's synced rows are removed")
                Task.detached { try? await self.deleteLocalData() }
            }
        case .fetchedDatabaseChanges(let changes):
            for deletion in changes.deletions { await removeZone(deletion.zoneID, reason: deletion.reason) }
        case .fetchedRecordZoneChanges(let changes):
            await handleFetched(changes, scope: scope)
        case .sentDatabaseChanges(let sent):
            if sent.savedZones.contains(where: { $0.zoneID == zoneID }) {
                try? await database.write { db in try Self.setSetting("zoneSaved", "1", db) }
            }
            for failure in sent.failedZoneSaves {
                statusBroadcast.update {
                    $0.lastError = "the zone \(failure.zone.zoneID) was not saved: \(failure.error)"
                }
            }
        case .sentRecordZoneChanges(let sent):
            await handleSent(sent, scope: scope)
        case .willFetchChanges:
            statusBroadcast.update { $0.isFetching = true }
            if scope == .private { await prepareKeys() }
        case .didFetchChanges:
            if status.unappliedCount > 0 {
                do { try await applyWaitingRecords() } catch {
                    logger.error("writing waiting records failed: \(error)")
                }
            }
            statusBroadcast.update { $0.isFetching = false }
        case .willSendChanges:
            statusBroadcast.update { $0.isSending = true }
        case .didSendChanges:
            // What was never answered (the request failed) is sent again by the next send.
            let unanswered = inFlight.withLock { $0.removeValue(forKey: scope) ?? [:] }
            for flight in unanswered.values {
                for file in flight.files { try? FileManager.default.removeItem(at: file) }
            }
            statusBroadcast.update { $0.isSending = false }
            refreshCounts()
        case .willFetchRecordZoneChanges, .didFetchRecordZoneChanges:
            break
        }
    }

    /// The sealed version of the last record this device has of each row: an older one the server hands
    /// back is refused as a rollback.
    public func lastKnownSealedVersions(of recordIDs: [RecordValue.ID], syncEngine: SyncEngine) async
        -> [RecordValue.ID: UInt64]
    {
        // Only the tables with encrypted columns have sealed records; each ID is looked up by its key in them.
        let sealed = schemas.filter { !$0.table.encryptedColumns.isEmpty }.map(\.name)
        guard !sealed.isEmpty else { return [:] }
        return
            (try? await database.read { db in
                var versions: [RecordValue.ID: UInt64] = [:]
                for id in recordIDs {
                    for table in sealed {
                        guard
                            let fields = MetadataCoding.systemFields(
                                try Data.fetchOne(
                                    cached: db,
                                    sql:
                                        "SELECT systemFields FROM synctables_metadata WHERE tableName = ? AND recordName = ?",
                                    arguments: [table, id.recordName])),
                            fields.recordID == id, let version = fields.sealedVersion
                        else { continue }
                        versions[id] = max(versions[id] ?? 0, version)
                    }
                }
                return versions
            }) ?? [:]
    }

    public func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.RecordZoneChangeBatch?
    {
        await nextBatch(scope: syncEngine.database.scope, options: context.options)
    }

    /// Makes the account's key pair if it has none yet (others wrap the keys of what they share with this
    /// account to it) and fetches the own zones' keys, once a start.
    func prepareKeys() async {
        guard let keyring = container.keyring, !keysPrepared.withLock({ $0 }) else { return }
        do {
            try await keyring.prepare(for: container.privateCloudDatabase)
            keysPrepared.withLock { $0 = true }
        } catch {
            logger.notice("the account's keys are not ready yet: \(error)")
        }
    }

    /// This account's user record name, asked of the server once and kept.
    func currentUserRecordName() async -> String? {
        if let known = try? await database.read({ db in try Self.setting("userRecordName", db) }) { return known }
        guard let id = try? await container.userRecordID() else { return nil }
        try? await database.write { db in try Self.setSetting("userRecordName", id.recordName, db) }
        return id.recordName
    }

    /// A share record: for a zone of another account, the access this account has there, for every row
    /// of the zone (a read-only row is refused locally, before it is queued).
    func applyShare(_ record: RecordValue, me: String?, _ db: Database) throws {
        let zone = record.recordID.zoneID
        guard zone.ownerName != RecordZone.ID.defaultOwnerName, let participants = Share.participants(in: record) else {
            return
        }
        let mine = participants.first { $0.userRecordName == me }
        let permission = mine?.permission == .readWrite ? "readWrite" : "readOnly"
        try setPermission(permission, zone: zone, db)
    }

    func setPermission(_ permission: String, zone: RecordZone.ID, _ db: Database) throws {
        try MetadataSchema.installGuards(schemas, db)
        try Self.setSetting("permission:\(zone.ownerName)/\(zone.zoneName)", permission, db)
        try db.execute(
            sql: "UPDATE synctables_metadata SET permission = ? WHERE ownerName = ? AND zoneName = ?",
            arguments: [permission, zone.ownerName, zone.zoneName])
    }

    /// A zone the server deleted, purged or stopped sharing with this account: its rows go from this
    /// device after ``Configuration/willRemoveZone`` had its say; a zone whose encrypted data was reset
    /// keeps its rows and uploads them again.
    func removeZone(_ zone: RecordZone.ID, reason: ZoneDeletionReason?) async {
        do {
            if reason == .encryptedDataReset {
                try await database.write { db in
                    try db.execute(
                        sql:
                            "UPDATE synctables_metadata SET systemFields = NULL, serverFields = NULL WHERE ownerName = ? AND zoneName = ?",
                        arguments: [zone.ownerName, zone.zoneName])
                    try self.queueEverything(zone: zone, db)
                    try self.recreateOwnZone(zone, db)
                }
                return
            }
            let counts = try await database.read { db in
                try Row.fetchAll(
                    db,
                    sql:
                        "SELECT tableName, COUNT(*) AS count FROM synctables_metadata WHERE ownerName = ? AND zoneName = ? GROUP BY tableName",
                    arguments: [zone.ownerName, zone.zoneName]
                ).reduce(into: [String: Int]()) { $0[$1["tableName"]] = $1["count"] }
            }
            var remove = true
            if let hook = configuration.willRemoveZone {
                remove = await hook(RemovedZone(zoneID: zone, reason: reason, rowCounts: counts))
            }
            let removing = remove
            try await database.write { db in
                try self.applying(db) {
                    if removing {
                        for schema in self.schemas.sorted(by: { $0.rank > $1.rank }) {
                            try db.execute(
                                sql: """
                                    DELETE FROM \(schema.name.quotedDatabaseIdentifier) WHERE \(schema.primaryKey.quotedDatabaseIdentifier) IN
                                        (SELECT recordName FROM synctables_metadata WHERE tableName = ? AND ownerName = ? AND zoneName = ?)
                                    """, arguments: [schema.name, zone.ownerName, zone.zoneName])
                        }
                    }
                    try db.execute(
                        sql: """
                            DELETE FROM synctables_pending WHERE EXISTS (SELECT 1 FROM synctables_metadata m
                                WHERE m.tableName = synctables_pending.tableName AND m.recordName = synctables_pending.recordName
                                AND m.ownerName = ? AND m.zoneName = ?)
                            """, arguments: [zone.ownerName, zone.zoneName])
                    try db.execute(
                        sql: "DELETE FROM synctables_metadata WHERE ownerName = ? AND zoneName = ?",
                        arguments: [zone.ownerName, zone.zoneName])
                    try db.execute(
                        sql: "DELETE FROM synctables_unapplied WHERE ownerName = ? AND zoneName = ?",
                        arguments: [zone.ownerName, zone.zoneName])
                    try self.forgetRemovedRows(db)
                    try self.recreateOwnZone(zone, db)
                }
            }
        } catch {
            logger.error("removing the rows of \(zone) failed: \(error)")
            statusBroadcast.update { $0.lastError = "\(error)" }
        }
    }

    /// The account's own zone, gone from the server, is made again (empty) for the rows to come.
    private func recreateOwnZone(_ zone: RecordZone.ID, _ db: Database) throws {
        guard zone == zoneID else { return }
        try Self.setSetting("zoneSaved", nil, db)
        engines.withLock { $0 }?.private.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: zone))])
    }

    /// Queues a save of every row (of `zone`, or every row), as after a reset.
    func queueEverything(zone: RecordZone.ID?, _ db: Database) throws {
        let now = Date().timeIntervalSince1970
        for schema in schemas {
            let key = schema.primaryKey.quotedDatabaseIdentifier
            let inZone =
                zone == nil
                ? "WHERE true"  // SQLite reads ON CONFLICT after a bare SELECT as a join's
                : """
                WHERE \(key) IN (SELECT recordName FROM synctables_metadata WHERE tableName = \(schema.name.sqlLiteral)
                    AND ownerName = \(zone!.ownerName.sqlLiteral) AND zoneName = \(zone!.zoneName.sqlLiteral))
                """
            try db.execute(
                sql: """
                    INSERT INTO synctables_pending (tableName, recordName, operation, changedAt)
                    SELECT ?, \(key), 'save', ? FROM \(schema.name.quotedDatabaseIdentifier) \(inZone)
                    ON CONFLICT (tableName, recordName) DO UPDATE SET heldBecause = NULL
                    """, arguments: [schema.name, now])
        }
    }
}
