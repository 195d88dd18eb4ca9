import Foundation
import GRDB
import Logging
import SyncKit
import Synchronization

/// Building batches from the outbox, and settling what the server answered.
extension TableSync {
    /// One outbox entry with what the server knows of its row.
    struct PendingEntry {
        let table: String
        let recordName: String
        let isDelete: Bool
        let version: Int64
        let changedAt: Double
        let zoneName: String?
        let ownerName: String?
        let systemFields: RecordValue.SystemFields?
        let serverFields: ServerFields?
    }

    static let batchSize = SyncEngine.RecordZoneChangeBatch.defaultMaximumCount

    /// The next batch for `scope`: saves parents first, then deletes children first, leaving out changes
    /// on their way; nil when the outbox holds nothing more for it.
    func nextBatch(scope: DatabaseScope, options: SyncEngine.SendChangesOptions) async
        -> SyncEngine.RecordZoneChangeBatch?
    {
        let skipping = inFlight.withLock { $0[scope] ?? [:] }
        do {
            let built = try await database.write { db in
                try self.buildBatch(scope: scope, skipping: skipping, options, db)
            }
            guard let built else { return nil }
            inFlight.withLock { flights in
                for (id, flight) in built.flights { flights[scope, default: [:]][id] = flight }
            }
            return built.batch
        } catch {
            logger.error("reading the outbox for a batch failed: \(error)")
            statusBroadcast.update { $0.lastError = "\(error)" }
            return nil
        }
    }

    private func buildBatch(
        scope: DatabaseScope, skipping: [Record.ID: InFlight], _ options: SyncEngine.SendChangesOptions, _ db: Database
    ) throws -> (batch: SyncEngine.RecordZoneChangeBatch, flights: [Record.ID: InFlight])? {
        try Outbox.fold(db)
        // Saves by table, parents first, then deletes, children first; each table's in the order made.
        // One query per table and operation, along the outbox's index, stopping once the batch is full.
        let saveOrder = schemas.sorted { $0.rank < $1.rank }.map { ($0.name, "save") }
        let deleteOrder = schemas.sorted { $0.rank > $1.rank }.map { ($0.name, "delete") }
        var entries: [PendingEntry] = []
        let busy = Set(skipping.map { "\($0.value.table)\u{0}\($0.key.recordName)" })
        let statement = try db.cachedStatement(
            sql: """
                SELECT p.tableName, p.recordName, p.operation, p.version, p.changedAt,
                    m.zoneName, m.ownerName, m.systemFields, m.serverFields
                FROM synctables_pending p LEFT JOIN synctables_metadata m USING (tableName, recordName)
                WHERE p.tableName = ? AND p.operation = ? AND p.heldBecause IS NULL
                ORDER BY p.changedAt
                """)
        scan: for (table, operation) in saveOrder + deleteOrder {
            let rows = try Row.fetchCursor(statement, arguments: [table, operation])
            while let row = try rows.next() {
                guard entries.count < Self.batchSize else { break scan }
                if !busy.isEmpty, busy.contains("\(table)\u{0}\(row["recordName"] as String)") { continue }
                entries.append(
                    PendingEntry(
                        table: table, recordName: row["recordName"], isDelete: operation == "delete",
                        version: row["version"], changedAt: row["changedAt"], zoneName: row["zoneName"],
                        ownerName: row["ownerName"],
                        systemFields: MetadataCoding.systemFields(row["systemFields"]),
                        serverFields: MetadataCoding.serverFields(row["serverFields"])))
            }
        }
        var saves: [Record] = []
        var deletes: [Record.ID] = []
        var flights: [Record.ID: InFlight] = [:]
        var placed: [String: RecordZone.ID] = [:]
        for entry in entries {
            guard let schema = schema(entry.table) else {
                try forget(entry, db)
                continue
            }
            if entry.isDelete {
                guard let zoneName = entry.zoneName, let ownerName = entry.ownerName, entry.systemFields != nil else {
                    try forget(entry, db)
                    continue
                }
                let id = Record.ID(
                    recordName: entry.recordName, zoneID: .init(zoneName: zoneName, ownerName: ownerName))
                guard Self.scope(of: id.zoneID) == scope, options.scope.contains(id), skipping[id] == nil else {
                    continue
                }
                deletes.append(id)
                flights[id] = InFlight(table: entry.table, version: entry.version)
                continue
            }
            if let problem = NameRules.problem(withName: entry.recordName, kind: "record name") {
                // The server would refuse the whole batch: this row is held, saying why, and the others go.
                try hold(
                    entry.table, entry.recordName,
                    because: "its key cannot name a record (\(problem)); give the row another key", db)
                continue
            }
            guard
                let row = try Row.fetchOne(
                    cached: db,
                    sql:
                        "SELECT * FROM \(schema.name.quotedDatabaseIdentifier) WHERE \(schema.primaryKey.quotedDatabaseIdentifier) = ?",
                    arguments: [entry.recordName])
            else {
                // Deleted since: its delete entry replaced this one, or it never reached the server.
                try forget(entry, db)
                continue
            }
            let zoneID: RecordZone.ID
            if let zoneName = entry.zoneName, let ownerName = entry.ownerName {
                zoneID = RecordZone.ID(zoneName: zoneName, ownerName: ownerName)
            } else {
                zoneID = try zone(for: schema, row: row, placed: &placed, db)
                try db.executeCached(
                    sql: """
                        INSERT INTO synctables_metadata (tableName, recordName, zoneName, ownerName, permission)
                        VALUES (?, ?, ?, ?, 'owner') ON CONFLICT DO NOTHING
                        """, arguments: [entry.table, entry.recordName, zoneID.zoneName, zoneID.ownerName])
            }
            let id = Record.ID(recordName: entry.recordName, zoneID: zoneID)
            placed["\(entry.table)\u{0}\(entry.recordName)"] = zoneID
            guard Self.scope(of: zoneID) == scope, options.scope.contains(id), skipping[id] == nil else { continue }
            var flight = InFlight(table: entry.table, version: entry.version)
            saves.append(try record(for: row, schema: schema, id: id, entry: entry, flight: &flight))
            flights[id] = flight
        }
        if saves.isEmpty && deletes.isEmpty { return nil }
        return (SyncEngine.RecordZoneChangeBatch(recordsToSave: saves, recordIDsToDelete: deletes), flights)
    }

    /// The database a zone's records are sent to: the account's own zones are private, others' shared.
    static func scope(of zoneID: RecordZone.ID) -> DatabaseScope {
        zoneID.ownerName == RecordZone.ID.defaultOwnerName ? .private : .shared
    }

    private func forget(_ entry: PendingEntry, _ db: Database) throws {
        try settle(entry.table, entry.recordName, version: entry.version, db)
        if entry.isDelete {
            try db.executeCached(
                sql: "DELETE FROM synctables_metadata WHERE tableName = ? AND recordName = ?",
                arguments: [entry.table, entry.recordName])
        }
    }

    /// The zone of a row the server has not seen: its parent's (a child lives with its parent, and is
    /// shared with it), else the account's own zone.
    private func zone(for schema: TableSchema, row: Row, placed: inout [String: RecordZone.ID], _ db: Database) throws
        -> RecordZone.ID
    {
        var schema = schema
        var row = row
        var seen = Set<String>()
        while let column = schema.parentColumn, let reference = schema.reference(for: column),
            let parentKey = row[column] as String?, let parent = self.schema(reference.table),
            seen.insert("\(parent.name)\u{0}\(parentKey)").inserted
        {
            if let known = placed["\(parent.name)\u{0}\(parentKey)"] { return known }
            if let metadata = try Row.fetchOne(
                cached: db,
                sql: "SELECT zoneName, ownerName FROM synctables_metadata WHERE tableName = ? AND recordName = ?",
                arguments: [parent.name, parentKey])
            {
                return RecordZone.ID(zoneName: metadata["zoneName"], ownerName: metadata["ownerName"])
            }
            guard
                let parentRow = try Row.fetchOne(
                    cached: db,
                    sql:
                        "SELECT * FROM \(parent.name.quotedDatabaseIdentifier) WHERE \(parent.primaryKey.quotedDatabaseIdentifier) = ?",
                    arguments: [parentKey])
            else { break }
            (schema, row) = (parent, parentRow)
        }
        return zoneID
    }

    /// The record to send for `row`: the server's last record (every field it holds, those of columns
    /// this version does not have included) with the row's columns set where they differ from it.
    private func record(for row: Row, schema: TableSchema, id: Record.ID, entry: PendingEntry, flight: inout InFlight)
        throws -> Record
    {
        var value =
            entry.systemFields.map { RecordValue(systemFields: $0) }
            ?? RecordValue(recordType: schema.table.recordType, recordID: id)
        let server = entry.serverFields ?? ServerFields()
        for (key, field) in server.plain { value.replaceWithoutChange(field: key, by: field) }
        for (key, field) in server.encrypted { value.replaceWithoutChange(encrypted: key, by: field) }
        let mapping = RecordMapping(schema: schema)
        let ancestor = entry.systemFields == nil ? nil : mapping.comparable(server)
        for column in schema.valueColumns {
            let current: DatabaseValue = row[column] ?? .null
            let comparable = RecordMapping.comparable(current)
            if let ancestor, ancestor[column] == comparable {
                if let digest = server.blobDigests[column] { flight.blobDigests[column] = digest }
                continue
            }
            var field = mapping.field(column, current, zoneID: id.zoneID)
            if case .blob(let bytes) = current.storage, bytes.count > configuration.assetThreshold {
                let file = assetDirectory.appendingPathComponent(UUID().uuidString)
                guard
                    FileManager.default.createFile(
                        atPath: file.path, contents: bytes, attributes: [.posixPermissions: 0o600])
                else {
                    throw TableSyncError.refused("cannot write \(file.path) for the upload of \(schema.name).\(column)")
                }
                flight.files.append(file)
                flight.blobDigests[column] = RecordMapping.digest(bytes)
                field = Asset(fileURL: file).recordFieldValue
            }
            if schema.table.encryptedColumns.contains(column) {
                value[encrypted: column] = field
                if value.fields[column] != nil { value.replaceWithoutChange(field: column, by: nil) }
            } else {
                value[column] = field
                if value.encryptedValues[column] != nil { value.replaceWithoutChange(encrypted: column, by: nil) }
            }
        }
        if let column = schema.parentColumn, let parentKey = row[column] as String? {
            value.parent = RecordValue.Reference(recordID: .init(recordName: parentKey, zoneID: id.zoneID))
        } else {
            value.parent = nil
        }
        return Record(value)
    }

    // MARK: The answer

    func handleSent(_ event: SyncEngine.Event.SentRecordZoneChanges, scope: DatabaseScope) async {
        let flights = inFlight.withLock { flights in
            var taken: [Record.ID: InFlight] = [:]
            let ids =
                event.savedRecords.map(\.recordID) + event.failedRecordSaves.map(\.record.recordID)
                + event.deletedRecordIDs + Array(event.failedRecordDeletes.keys)
            for id in ids { taken[id] = flights[scope]?.removeValue(forKey: id) }
            return taken
        }
        for flight in flights.values {
            for file in flight.files { try? FileManager.default.removeItem(at: file) }
        }
        // Conflicts need the server's assets on this device before the merge is written.
        var conflicts: [(failure: SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave, server: Record)] = []
        for failure in event.failedRecordSaves where failure.error.code == .serverRecordChanged {
            if let server = failure.error.serverRecord { conflicts.append((failure, server)) }
        }
        var downloaded: [Record.ID: [String: Data]] = [:]
        for conflict in conflicts {
            downloaded[conflict.server.recordID] = await assetBytes(of: conflict.server.value, scope: scope)
        }
        let now = Date()
        let assets = downloaded
        do {
            try await database.write { db in
                try self.applying(db) {
                    if let latest = event.savedRecords.compactMap(\.modificationDate).max() {
                        try Self.setSetting("clockOffset", String(latest.timeIntervalSince(now)), db)
                    }
                    for saved in event.savedRecords {
                        guard let flight = flights[saved.recordID] else { continue }
                        try self.settleSave(saved.value, flight: flight, db)
                    }
                    for id in event.deletedRecordIDs {
                        guard let flight = flights[id] else { continue }
                        try self.settleDelete(id, flight: flight, db)
                    }
                    for (id, error) in event.failedRecordDeletes {
                        guard let flight = flights[id] else { continue }
                        if error.code == .unknownItem || error.code == .zoneNotFound {
                            try self.settleDelete(id, flight: flight, db)
                        } else if !error.isTransient {
                            try self.hold(flight.table, id.recordName, because: error, db)
                        }
                    }
                    for failure in event.failedRecordSaves {
                        let id = failure.record.recordID
                        guard let flight = flights[id] else { continue }
                        try self.settleFailedSave(failure, flight: flight, downloaded: assets[id] ?? [:], db)
                    }
                }
            }
        } catch {
            logger.error("recording what the server saved failed: \(error)")
            statusBroadcast.update { $0.lastError = "\(error)" }
        }
    }

    private func settleSave(_ saved: RecordValue, flight: InFlight, _ db: Database) throws {
        var fields = ServerFields(saved)
        fields.blobDigests = flight.blobDigests
        try db.executeCached(
            sql: """
                UPDATE synctables_metadata SET systemFields = ?, serverFields = ?, serverModifiedAt = ?
                WHERE tableName = ? AND recordName = ?
                """,
            arguments: [
                MetadataCoding.encode(saved.systemFields), MetadataCoding.encode(fields),
                saved.modificationDate?.timeIntervalSince1970, flight.table, saved.recordID.recordName,
            ])
        try settle(flight.table, saved.recordID.recordName, version: flight.version, db)
        // Deleted while its first save was on its way: the trigger saw no record to delete then.
        if let schema = schema(flight.table),
            try !Bool(
                Int.fetchOne(
                    cached: db,
                    sql:
                        "SELECT COUNT(*) FROM \(schema.name.quotedDatabaseIdentifier) WHERE \(schema.primaryKey.quotedDatabaseIdentifier) = ?",
                    arguments: [saved.recordID.recordName]) ?? 0 > 0)
        {
            try db.executeCached(
                sql: """
                    INSERT INTO synctables_pending (tableName, recordName, operation, changedAt) VALUES (?, ?, 'delete', ?)
                    ON CONFLICT DO UPDATE SET operation = 'delete', version = version + 1
                    """, arguments: [flight.table, saved.recordID.recordName, Date().timeIntervalSince1970])
        }
    }

    private func settleDelete(_ id: Record.ID, flight: InFlight, _ db: Database) throws {
        // Changed again since (saved anew): the record must be made again, so the metadata stays.
        if try settle(flight.table, id.recordName, version: flight.version, db) {
            try db.executeCached(
                sql: "DELETE FROM synctables_metadata WHERE tableName = ? AND recordName = ?",
                arguments: [flight.table, id.recordName])
        }
    }

    func hold(_ table: String, _ recordName: String, because error: SyncError, _ db: Database) throws {
        try hold(table, recordName, because: "\(error.code): \(error.message)", db)
    }

    /// Keeps a row's change out of the batches, saying why, until the row changes again.
    func hold(_ table: String, _ recordName: String, because reason: String, _ db: Database) throws {
        try db.executeCached(
            sql: "UPDATE synctables_pending SET heldBecause = ? WHERE tableName = ? AND recordName = ?",
            arguments: [reason, table, recordName])
    }

    /// Removes a row's outbox entry if it is still the one sent (`version`): a change made since stays.
    /// Returns whether it was.
    @discardableResult
    private func settle(_ table: String, _ recordName: String, version: Int64, _ db: Database) throws -> Bool {
        try db.executeCached(
            sql: "DELETE FROM synctables_pending WHERE tableName = ? AND recordName = ? AND version = ?",
            arguments: [table, recordName, version])
        return db.changesCount > 0
    }

    private func settleFailedSave(
        _ failure: SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave, flight: InFlight,
        downloaded: [String: Data], _ db: Database
    ) throws {
        let id = failure.record.recordID
        switch failure.error.code {
        case .serverRecordChanged:
            guard let server = failure.error.serverRecordValue, let schema = schema(flight.table) else {
                try hold(flight.table, id.recordName, because: failure.error, db)
                return
            }
            try merge(server: server, downloaded: downloaded, schema: schema, db)
        case .unknownItem:
            // Deleted on the server by another device after this one last fetched it: this device's row
            // is newer than the deletion, so it is sent again as a new record (nothing lost).
            try db.executeCached(
                sql:
                    "UPDATE synctables_metadata SET systemFields = NULL, serverFields = NULL WHERE tableName = ? AND recordName = ?",
                arguments: [flight.table, id.recordName])
        case .zoneNotFound:
            if Self.scope(of: id.zoneID) == .private {
                try Self.setSetting("zoneSaved", nil, db)
                engines.withLock { $0 }?.private.state.add(pendingDatabaseChanges: [
                    .saveZone(RecordZone(zoneID: id.zoneID))
                ])
            } else {
                try hold(flight.table, id.recordName, because: failure.error, db)
            }
        default:
            if !failure.error.isTransient { try hold(flight.table, id.recordName, because: failure.error, db) }
        }
    }
}
