import Foundation
import SyncCore

/// `CKDatabase`'s async methods: records and zones read and written directly, beside (or
/// without) an engine. Per-item failures come back as `Result`s where CloudKit returns them so;
/// the single-item forms throw the item's ``SyncError``.
extension Database {
    /// The database's scope (`CKDatabase.databaseScope`).
    public var databaseScope: DatabaseScope { scope }

    private var client: DatabaseClient { DatabaseClient(database: self) }

    // MARK: Records

    /// Fetches one record; throws `unknownItem` when there is none.
    public func record(for recordID: Record.ID, desiredKeys: [Record.FieldKey]? = nil) async throws -> Record {
        guard let result = try await records(for: [recordID], desiredKeys: desiredKeys)[recordID] else {
            throw SyncError(.internalError, "the server's answer left out \(recordID)")
        }
        return try result.get()
    }

    /// Fetches records by ID; each ID gets its record or its error (`unknownItem` for none, `recordTampered`
    /// for one that does not open or fails its sealed type's checks). With `desiredKeys`, the records carry
    /// only those fields (CloudKit's `desiredKeys`: a list that leaves out an asset field fetches none of
    /// it; an asset's bytes never come with a record in any case, see ``fetchAssetContent(_:of:progress:)``).
    public func records(for ids: [Record.ID], desiredKeys: [Record.FieldKey]? = nil) async throws
        -> [Record.ID: Result<Record, any Error>]
    {
        let response = try await client.lookupRecords(LookupRecordsRequest(recordIDs: ids, desiredKeys: desiredKeys))
        var results: [Record.ID: Result<Record, any Error>] = [:]
        for (arrived, result) in try await incomingChecked(response.records) {
            results[arrived.recordID] = result.mapError { $0 }
        }
        for failure in response.failures { results[failure.recordID] = .failure(await incoming(failure.error)) }
        return results
    }

    /// Saves one record with `ifServerRecordUnchanged`; returns the record as the server stored it.
    public func save(_ record: Record) async throws -> Record {
        let (saves, _) = try await modifyRecords(saving: [record], deleting: [])
        guard let result = saves[record.recordID] else {
            throw SyncError(.internalError, "the server's answer left out \(record.recordID)")
        }
        return try result.get()
    }

    /// Deletes one record. Deleting a record that is not there succeeds, as with CloudKit.
    @discardableResult
    public func deleteRecord(withID recordID: Record.ID) async throws -> Record.ID {
        let (_, deletes) = try await modifyRecords(saving: [], deleting: [recordID])
        try deletes[recordID]?.get()
        return recordID
    }

    /// Saves and deletes records in one request. With `atomically`, a failure in a zone fails that
    /// zone's other changes with `batchRequestFailed`.
    public func modifyRecords(
        saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID],
        savePolicy: SavePolicy = .ifServerRecordUnchanged, atomically: Bool = true
    ) async throws -> (
        saveResults: [Record.ID: Result<Record, any Error>], deleteResults: [Record.ID: Result<Void, any Error>]
    ) {
        let response = try await modifyRecords(
            saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically,
            through: { try await client.modifyRecords($0) })
        var saves: [Record.ID: Result<Record, any Error>] = [:]
        for (arrived, result) in try await incomingChecked(response.savedRecords) {
            saves[arrived.recordID] = result.mapError { $0 }
        }
        for failure in response.failedRecordSaves { saves[failure.recordID] = .failure(await incoming(failure.error)) }
        var deletes: [Record.ID: Result<Void, any Error>] = [:]
        for id in response.deletedRecordIDs { deletes[id] = .success(()) }
        for failure in response.failedRecordDeletes { deletes[failure.recordID] = .failure(failure.error) }
        return (saves, deletes)
    }

    // MARK: Zones

    /// Fetches one zone; throws `zoneNotFound` when there is none.
    public func recordZone(for zoneID: RecordZone.ID) async throws -> RecordZone {
        guard let zone = try await allRecordZones().first(where: { $0.zoneID == zoneID }) else {
            throw SyncError(.zoneNotFound, "there is no zone \(zoneID) in the \(scope.rawValue) database")
        }
        return zone
    }

    /// Every zone in the database.
    public func allRecordZones() async throws -> [RecordZone] {
        try await client.listZones().zones
    }

    /// Creates a zone (saving one that exists changes nothing); returns it as the server has it.
    public func save(_ zone: RecordZone) async throws -> RecordZone {
        let (saves, _) = try await modifyRecordZones(saving: [zone], deleting: [])
        guard let result = saves[zone.zoneID] else {
            throw SyncError(.internalError, "the server's answer left out zone \(zone.zoneID)")
        }
        return try result.get()
    }

    /// Deletes a zone and every record in it; other devices learn of it as a zone deletion.
    ///
    /// A zone that is not there counts as deleted: what was asked for holds, and code that clears
    /// its zone before starting (as Apple's sample tests do) works on a new account too.
    @discardableResult
    public func deleteRecordZone(withID zoneID: RecordZone.ID) async throws -> RecordZone.ID {
        let (_, deletes) = try await modifyRecordZones(saving: [], deleting: [zoneID])
        do {
            try deletes[zoneID]?.get()
        } catch let error as SyncError where error.code == .zoneNotFound {
            return zoneID
        }
        return zoneID
    }

    /// Saves and deletes zones in one request.
    public func modifyRecordZones(saving zonesToSave: [RecordZone], deleting zoneIDsToDelete: [RecordZone.ID])
        async throws -> (
            saveResults: [RecordZone.ID: Result<RecordZone, any Error>],
            deleteResults: [RecordZone.ID: Result<Void, any Error>]
        )
    {
        let response = try await client.modifyZones(ModifyZonesRequest(saves: zonesToSave, deletes: zoneIDsToDelete))
        // A zone made or deleted here may have a new key (or none): keys held for it are stale.
        keyring?.forget(zoneIDs: zonesToSave.map(\.zoneID) + zoneIDsToDelete)
        var saves: [RecordZone.ID: Result<RecordZone, any Error>] = [:]
        for zone in response.savedZones { saves[zone.zoneID] = .success(zone) }
        for failure in response.failedZoneSaves { saves[failure.zone.zoneID] = .failure(failure.error) }
        var deletes: [RecordZone.ID: Result<Void, any Error>] = [:]
        for id in response.deletedZoneIDs { deletes[id] = .success(()) }
        for failure in response.failedZoneDeletes { deletes[failure.zoneID] = .failure(failure.error) }
        return (saves, deletes)
    }
}
