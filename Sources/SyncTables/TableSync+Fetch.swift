import Foundation
import GRDB
import Logging
import SyncKit
import Synchronization

/// Writing what the server sent into the app's tables: parents before children, children that came
/// before their parent (or records of a table this version lacks) kept until they can be written,
/// rows with unsent changes merged by their table's policy.
extension TableSync {
    /// Whether a record was written, or why it waits.
    enum Applied: Equatable {
        case written
        case waiting(String)
    }

    /// The bytes of every asset field of `record`, by field, downloaded to this device.
    func assetBytes(of record: RecordValue, scope: DatabaseScope) async -> [String: Data] {
        var bytes: [String: Data] = [:]
        let database = container.database(with: scope)
        for (key, field) in record.fields.merging(record.encryptedValues, uniquingKeysWith: { a, _ in a }) {
            guard case .asset(let reference) = field else { continue }
            do {
                let file = try await database.fetchAssetContent(Asset(reference: reference), of: record.recordID)
                bytes[key] = try Data(contentsOf: file)
            } catch {
                logger.error("downloading \(key) of \(record.recordID) failed: \(error)")
            }
        }
        return bytes
    }

    func handleFetched(_ event: SyncEngine.Event.FetchedRecordZoneChanges, scope: DatabaseScope) async {
        var downloads: [Record.ID: [String: Data]] = [:]
        for modification in event.modifications where schema(recordType: modification.record.recordType) != nil {
            let value = modification.record.value
            if RecordMapping.namesAsset(value) { downloads[value.recordID] = await assetBytes(of: value, scope: scope) }
        }
        for refused in event.failedRecordFetches {
            // Never data: a sealed column the server sent in plain, a seal that does not open, a rollback.
            logger.error("refused \(refused.recordID): \(refused.error)")
            statusBroadcast.update { $0.lastError = "refused \(refused.recordID) from the server: \(refused.error)" }
        }
        let me = await currentUserRecordName()
        let downloaded = downloads
        do {
            try await database.write { db in
                try self.applying(db) {
                    let shares = event.modifications.map(\.record.value).filter { $0.recordType == Share.recordType }
                    for share in shares { try self.applyShare(share, me: me, db) }
                    let records = event.modifications.map(\.record.value).filter { $0.recordType != Share.recordType }
                        .sorted { self.rank(of: $0.recordType) < self.rank(of: $1.recordType) }
                    for record in records {
                        let outcome = try self.applyAlone(record, downloaded: downloaded[record.recordID] ?? [:], db)
                        if case .waiting(let reason) = outcome { try self.keepUnapplied(record, reason: reason, db) }
                    }
                    let deletions = event.deletions.sorted {
                        self.rank(of: $0.recordType) > self.rank(of: $1.recordType)
                    }
                    for deletion in deletions {
                        try self.applyDeletion(deletion.recordID, recordType: deletion.recordType, db)
                    }
                    // Once a page: it reads every table with a foreign key.
                    if !deletions.isEmpty { try self.forgetRemovedRows(db) }
                    try self.applyWaiting(db)
                }
            }
        } catch {
            logger.error("writing fetched records failed: \(error)")
            statusBroadcast.update { $0.lastError = "\(error)" }
        }
        refreshCounts()
    }

    func rank(of recordType: String) -> Int { schema(recordType: recordType)?.rank ?? Int.max }

    /// ``apply(_:downloaded:_:)`` in a savepoint of its own: a record that cannot be written (a value its
    /// column's constraints refuse) waits, saying why, and the others are written.
    func applyAlone(_ record: RecordValue, downloaded: [String: Data], _ db: Database) throws -> Applied {
        var outcome = Applied.written
        do {
            try db.inSavepoint {
                outcome = try apply(record, downloaded: downloaded, db)
                return .commit
            }
        } catch let error as DatabaseError {
            outcome = .waiting("it could not be written: \(error.message ?? "\(error)")")
        }
        return outcome
    }

    /// Writes one fetched record into its table, or says why it waits.
    func apply(_ record: RecordValue, downloaded: [String: Data], _ db: Database) throws -> Applied {
        guard let schema = schema(recordType: record.recordType) else {
            return .waiting("this version of the app has no table for \(record.recordType) records")
        }
        let name = record.recordID.recordName
        let fields = ServerFields(record)
        let server = RecordMapping(schema: schema).row(fields, key: name, downloaded: downloaded)
        if let column = server.missingAsset { return .waiting("its \(column) could not be downloaded yet") }
        for reference in schema.references {
            guard let key = server.values[reference.column], let parentKey = String.fromDatabaseValue(key),
                let parent = self.schema(reference.table)
            else { continue }
            if try !exists(parent, parentKey, db) {
                return .waiting("its \(reference.column) \(parentKey) in \(reference.table) has not arrived")
            }
        }
        let pending = try Row.fetchOne(
            cached: db,
            sql: "SELECT operation, changedAt FROM synctables_pending WHERE tableName = ? AND recordName = ?",
            arguments: [schema.name, name])
        if let pending, let current = try self.row(schema, name, db) {
            if pending["operation"] == "save" {
                try writeMerge(
                    schema: schema, record: record, server: server.values, current: current,
                    editedAt: pending["changedAt"], db)
            }
        } else if pending?["operation"] as String? == "delete" {
            // Deleted here and not yet sent: the delete goes out with the server's newer record's tag.
        } else {
            try upsert(schema, server.values, db)
        }
        var stored = fields
        stored.blobDigests = server.digests
        try saveMetadata(schema: schema, record: record, fields: stored, db)
        return .written
    }

    /// Settles a conflict with the server's record (from a save's `serverRecordChanged`). A column whose
    /// asset did not download keeps this device's value.
    func merge(server: RecordValue, downloaded: [String: Data], schema: TableSchema, _ db: Database) throws {
        let name = server.recordID.recordName
        let fields = ServerFields(server)
        guard let current = try row(schema, name, db) else {
            // Deleted here meanwhile: the delete is sent with the server's record's tag.
            try saveMetadata(schema: schema, record: server, fields: fields, db)
            return
        }
        let editedAt =
            try Double.fetchOne(
                cached: db, sql: "SELECT changedAt FROM synctables_pending WHERE tableName = ? AND recordName = ?",
                arguments: [schema.name, name]) ?? Date().timeIntervalSince1970
        let row = RecordMapping(schema: schema).row(fields, key: name, downloaded: downloaded)
        try writeMerge(schema: schema, record: server, server: row.values, current: current, editedAt: editedAt, db)
        var stored = fields
        stored.blobDigests = row.digests
        try saveMetadata(schema: schema, record: server, fields: stored, db)
    }

    /// Merges this device's row with the server's by the table's policy, against the ancestor (the server's
    /// last record the metadata keeps), writes the result, logs what it overwrote, and leaves the row queued
    /// only if the result differs from the server's. Columns the server's row leaves out keep this device's.
    private func writeMerge(
        schema: TableSchema, record: RecordValue, server: RowValues, current: RowValues, editedAt: Double,
        _ db: Database
    ) throws {
        let name = record.recordID.recordName
        let ancestor = MetadataCoding.serverFields(
            try Data.fetchOne(
                cached: db, sql: "SELECT serverFields FROM synctables_metadata WHERE tableName = ? AND recordName = ?",
                arguments: [schema.name, name]))
        var serverRow = server
        for column in schema.columns where serverRow[column] == nil { serverRow[column] = current[column] ?? .null }
        let conflict = RowConflict(
            table: schema.name, recordName: name,
            ancestor: ancestor.map { RecordMapping(schema: schema).row($0, key: name) },
            client: current, server: serverRow,
            clientEditedAt: Date(timeIntervalSince1970: editedAt + (try Self.clockOffset(db))),
            serverModifiedAt: record.modificationDate)
        let (merged, lost) = ConflictMerge.resolve(schema.table.conflicts, conflict, columns: schema.columns)
        try upsert(schema, merged, db)
        let now = Date().timeIntervalSince1970
        for value in lost {
            try db.executeCached(
                sql: """
                    INSERT INTO synctables_conflicts (tableName, recordName, columnName, policy, kept, lost, lostFrom, at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    schema.name, name, value.column, schema.table.conflicts.name, value.kept, value.lost,
                    value.lostFrom.rawValue, now,
                ])
        }
        let settled = schema.columns.allSatisfy {
            RecordMapping.comparable(merged[$0] ?? .null) == RecordMapping.comparable(serverRow[$0] ?? .null)
        }
        if settled {
            try db.executeCached(
                sql: "DELETE FROM synctables_pending WHERE tableName = ? AND recordName = ? AND operation = 'save'",
                arguments: [schema.name, name])
        } else {
            // Sent again, merged: a version above the one on its way, so that its answer does not settle it.
            try db.executeCached(
                sql: "UPDATE synctables_pending SET version = version + 1 WHERE tableName = ? AND recordName = ?",
                arguments: [schema.name, name])
        }
    }

    func saveMetadata(schema: TableSchema, record: RecordValue, fields: ServerFields, _ db: Database) throws {
        let zone = record.recordID.zoneID
        let permission =
            zone.ownerName == RecordZone.ID.defaultOwnerName
            ? "owner" : (try Self.setting("permission:\(zone.ownerName)/\(zone.zoneName)", db) ?? "readOnly")
        try db.executeCached(
            sql: """
                INSERT INTO synctables_metadata (tableName, recordName, zoneName, ownerName, systemFields,
                    serverFields, serverModifiedAt, shareRecordName, permission)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (tableName, recordName) DO UPDATE SET zoneName = excluded.zoneName,
                    ownerName = excluded.ownerName, systemFields = excluded.systemFields,
                    serverFields = excluded.serverFields, serverModifiedAt = excluded.serverModifiedAt,
                    shareRecordName = excluded.shareRecordName, permission = excluded.permission
                """,
            arguments: [
                schema.name, record.recordID.recordName, zone.zoneName, zone.ownerName,
                MetadataCoding.encode(record.systemFields), MetadataCoding.encode(fields),
                record.modificationDate?.timeIntervalSince1970, record.share?.recordID.recordName, permission,
            ])
    }

    /// The synced columns of a row, or nil when there is no such row.
    func row(_ schema: TableSchema, _ key: String, _ db: Database) throws -> RowValues? {
        let columns = schema.columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        guard
            let row = try Row.fetchOne(
                cached: db,
                sql:
                    "SELECT \(columns) FROM \(schema.name.quotedDatabaseIdentifier) WHERE \(schema.primaryKey.quotedDatabaseIdentifier) = ?",
                arguments: [key])
        else { return nil }
        var values: RowValues = [:]
        for column in schema.columns { values[column] = row[column] }
        return values
    }

    func exists(_ schema: TableSchema, _ key: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(
            cached: db,
            sql:
                "SELECT EXISTS (SELECT 1 FROM \(schema.name.quotedDatabaseIdentifier) WHERE \(schema.primaryKey.quotedDatabaseIdentifier) = ?)",
            arguments: [key]) ?? false
    }

    /// Inserts the row, or updates the columns given (never a replace, which would delete the row and
    /// cascade to its children).
    func upsert(_ schema: TableSchema, _ values: RowValues, _ db: Database) throws {
        let columns = schema.columns.filter { values[$0] != nil }
        let names = columns.map(\.quotedDatabaseIdentifier)
        let updates = columns.dropFirst().map {
            "\($0.quotedDatabaseIdentifier) = excluded.\($0.quotedDatabaseIdentifier)"
        }
        try db.executeCached(
            sql: """
                INSERT INTO \(schema.name.quotedDatabaseIdentifier) (\(names.joined(separator: ", ")))
                VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
                ON CONFLICT (\(schema.primaryKey.quotedDatabaseIdentifier)) DO \(updates.isEmpty ? "NOTHING" : "UPDATE SET \(updates.joined(separator: ", "))")
                """, arguments: StatementArguments(columns.map { values[$0]! }))
    }

    /// A record deleted on the server: its row goes (its children with it, by their foreign keys), or, if
    /// it had not arrived yet, it stops waiting. Unsent changes to it are kept in the conflict log. The
    /// caller forgets the rows the foreign keys took with it (``forgetRemovedRows(_:)``), once for a page.
    func applyDeletion(_ id: Record.ID, recordType: String, _ db: Database) throws {
        try stopWaiting(id, recordType: recordType, db)
        guard let schema = schema(recordType: recordType) else { return }
        let pending = try String.fetchOne(
            cached: db, sql: "SELECT operation FROM synctables_pending WHERE tableName = ? AND recordName = ?",
            arguments: [schema.name, id.recordName])
        if pending == "save", let current = try row(schema, id.recordName, db) {
            let now = Date().timeIntervalSince1970
            for column in schema.valueColumns {
                try db.executeCached(
                    sql: """
                        INSERT INTO synctables_conflicts (tableName, recordName, columnName, policy, kept, lost, lostFrom, at)
                        VALUES (?, ?, ?, 'deletedOnServer', NULL, ?, 'device', ?)
                        """, arguments: [schema.name, id.recordName, column, current[column] ?? .null, now])
            }
        }
        try db.executeCached(
            sql:
                "DELETE FROM \(schema.name.quotedDatabaseIdentifier) WHERE \(schema.primaryKey.quotedDatabaseIdentifier) = ?",
            arguments: [id.recordName])
        try db.executeCached(
            sql: "DELETE FROM synctables_pending WHERE tableName = ? AND recordName = ?",
            arguments: [schema.name, id.recordName])
        try db.executeCached(
            sql: "DELETE FROM synctables_metadata WHERE tableName = ? AND recordName = ?",
            arguments: [schema.name, id.recordName])
    }

    /// Metadata and outbox entries of rows the database's own foreign keys removed (a cascade): the
    /// server removed their records too (`deleteSelf`), or keeps them where the reference does not cascade.
    func forgetRemovedRows(_ db: Database) throws {
        for schema in schemas where !schema.references.isEmpty {
            let table = schema.name.quotedDatabaseIdentifier
            let key = schema.primaryKey.quotedDatabaseIdentifier
            try db.executeCached(
                sql: """
                    DELETE FROM synctables_metadata WHERE tableName = ? AND recordName NOT IN (SELECT \(key) FROM \(table))
                    """, arguments: [schema.name])
            try db.executeCached(
                sql: """
                    DELETE FROM synctables_pending WHERE tableName = ? AND operation = 'save'
                        AND recordName NOT IN (SELECT \(key) FROM \(table))
                    """, arguments: [schema.name])
        }
    }

    // MARK: Records that wait

    /// A waiting record that was written, or deleted on the server, waits no more.
    func stopWaiting(_ id: Record.ID, recordType: String, _ db: Database) throws {
        try db.executeCached(
            sql: """
                DELETE FROM synctables_unapplied WHERE recordType = ? AND recordName = ? AND zoneName = ? AND ownerName = ?
                """, arguments: [recordType, id.recordName, id.zoneID.zoneName, id.zoneID.ownerName])
    }

    func keepUnapplied(_ record: RecordValue, reason: String, _ db: Database) throws {
        let stored = UnappliedRecord.Stored(systemFields: record.systemFields, fields: ServerFields(record))
        try db.executeCached(
            sql: """
                INSERT OR REPLACE INTO synctables_unapplied (recordType, recordName, zoneName, ownerName, record, reason, receivedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                record.recordType, record.recordID.recordName, record.recordID.zoneID.zoneName,
                record.recordID.zoneID.ownerName, try JSONEncoder().encode(stored), reason,
                Date().timeIntervalSince1970,
            ])
    }

    /// Writes the waiting records that can be written now (their parent arrived, their table exists),
    /// parents first, until none more can. A record that names an asset waits for its bytes in
    /// `downloaded` (``applyWaitingRecords()`` fetches them).
    func applyWaiting(_ db: Database, downloaded: [Record.ID: [String: Data]] = [:]) throws {
        while true {
            var progress = false
            let records = try waitingRecords(db).sorted { rank(of: $0.recordType) < rank(of: $1.recordType) }
            for record in records where schema(recordType: record.recordType) != nil {
                let bytes = downloaded[record.recordID]
                if bytes == nil && RecordMapping.namesAsset(record) { continue }
                if try applyAlone(record, downloaded: bytes ?? [:], db) == .written {
                    try stopWaiting(record.recordID, recordType: record.recordType, db)
                    progress = true
                }
            }
            if !progress { return }
        }
    }

    /// The records that wait, as they arrived.
    private func waitingRecords(_ db: Database) throws -> [RecordValue] {
        try Data.fetchAll(db, sql: "SELECT record FROM synctables_unapplied").compactMap {
            try? JSONDecoder().decode(UnappliedRecord.Stored.self, from: $0).record
        }
    }

    /// Writes waiting records that can be written now, downloading their assets first: after a fetch that
    /// leaves records waiting, and for an app after the migration that adds their table.
    public func applyWaitingRecords() async throws {
        let waiting = try await database.read { db in try self.waitingRecords(db) }
        var downloads: [Record.ID: [String: Data]] = [:]
        for record in waiting where schema(recordType: record.recordType) != nil && RecordMapping.namesAsset(record) {
            downloads[record.recordID] = await assetBytes(of: record, scope: Self.scope(of: record.recordID.zoneID))
        }
        let downloaded = downloads
        try await database.write { db in
            try self.applying(db) {
                try self.applyWaiting(db, downloaded: downloaded)
                try self.updateCounts(db)
            }
        }
    }
}
