import Foundation
import HTTPTypes
import Hummingbird
import SyncCore

/// The routes under `/v1/databases/{scope}`: zones, records and their changes.
///
/// The private database is the user's own. The shared database holds what other users share
/// with this one; sharing is not implemented yet, so it is always empty and accepts no zones.
struct DatabaseRoutes {
    let store: any RecordStore
    let pushHub: PushHub
    let configuration: SyncServerConfiguration
    let body: BodyCoding

    static let deviceHeader = HTTPField.Name("X-Device-ID")!

    private static func deviceID(_ request: Request) throws -> String? {
        try DeviceID.validated(request.headers[deviceHeader], source: "the X-Device-ID header")
    }

    private var limits: ServerLimits { configuration.limits }

    private static func scope(_ context: SyncRequestContext) throws -> DatabaseScope {
        let name = context.parameters.get("scope") ?? ""
        guard let scope = DatabaseScope(rawValue: name) else {
            throw SyncError(.invalidArguments, "there is no database '\(name)'; use 'private' or 'shared'")
        }
        return scope
    }

    private static func ownZoneID(_ zoneName: String) -> RecordZone.ID {
        RecordZone.ID(zoneName: zoneName)
    }

    private static func sharedZoneNotFound(_ zoneID: RecordZone.ID) -> SyncError {
        SyncError(.zoneNotFound, "zone '\(zoneID.zoneName)' is not shared with you")
    }

    // MARK: Zones

    func listZones(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let scope = try Self.scope(context)
        try await body.checkOptionalObject(in: request)
        guard scope == .private else { return try body.response(ListZonesResponse(zones: [])) }
        let zones = try await store.zones(owner: user)
        return try body.response(
            ListZonesResponse(
                zones: zones.map { RecordZone(zoneID: Self.ownZoneID($0.zoneName), encryptionKey: $0.encryptionKey) }))
    }

    func modifyZones(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let scope = try Self.scope(context)
        let device = try Self.deviceID(request)
        let modification = try await body.decode(ModifyZonesRequest.self, from: request)
        try RequestValidation.validate(itemCount: modification.saves.count + modification.deletes.count, limits: limits)
        for (index, zone) in modification.saves.enumerated() {
            try RequestValidation.validate(zone.zoneID, owner: user, context: "saves[\(index)]")
        }
        for (index, zoneID) in modification.deletes.enumerated() {
            try RequestValidation.validate(zoneID, owner: user, context: "deletes[\(index)]")
        }
        guard scope == .private else {
            return try body.response(
                ModifyZonesResponse(
                    failedZoneSaves: modification.saves.map {
                        .init(
                            zone: $0,
                            error: SyncError(
                                .permissionFailure,
                                "zones cannot be created in the shared database; save them in the private database"))
                    },
                    failedZoneDeletes: modification.deletes.map {
                        .init(zoneID: $0, error: Self.sharedZoneNotFound($0))
                    }))
        }
        let outcome = try await store.modifyZones(
            owner: user,
            saves: modification.saves.map { StoredZone(zoneName: $0.zoneID.zoneName, encryptionKey: $0.encryptionKey) },
            deletes: modification.deletes.map(\.zoneName), now: Date())
        if outcome.changed {
            await pushHub.notify(user: user, scope: .private, excludingDevice: device)
        }
        let missing = Set(outcome.missing)
        return try body.response(
            ModifyZonesResponse(
                // Each zone as stored: a zone that had a key answers that key, not the one sent.
                savedZones: zip(modification.saves, outcome.saved).map {
                    RecordZone(zoneID: $0.zoneID, encryptionKey: $1.encryptionKey)
                },
                deletedZoneIDs: modification.deletes.filter { !missing.contains($0.zoneName) },
                failedZoneDeletes: modification.deletes.filter { missing.contains($0.zoneName) }.map {
                    .init(zoneID: $0, error: SyncError(.zoneNotFound, "zone '\($0.zoneName)' does not exist"))
                }))
    }

    func fetchDatabaseChanges(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let scope = try Self.scope(context)
        let fetch = try await body.decode(FetchDatabaseChangesRequest.self, from: request)
        let limit = try resultsLimit(fetch.resultsLimit)
        let cursor = try fetch.since.map {
            try ChangeCursor(token: $0, expecting: .database, owner: user, scope: scope, zoneName: nil)
        }
        guard scope == .private else {
            return try body.response(
                FetchDatabaseChangesResponse(
                    modifications: [], deletions: [],
                    changeToken: ChangeCursor.database(owner: user, scope: scope, seq: 0).token, moreComing: false))
        }
        let page = try await store.databaseChanges(owner: user, since: cursor, limit: limit)
        return try body.response(
            FetchDatabaseChangesResponse(
                modifications: page.modifiedZoneNames.map(Self.ownZoneID),
                deletions: page.deletions.map { .init(zoneID: Self.ownZoneID($0.zoneName), reason: $0.reason) },
                changeToken: page.cursor.token, moreComing: page.moreComing))
    }

    // MARK: Records

    func modifyRecords(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let scope = try Self.scope(context)
        let device = try Self.deviceID(request)
        let modification = try await body.decode(ModifyRecordsRequest.self, from: request)
        try RequestValidation.validate(modification, owner: user, limits: limits)
        guard scope == .private else {
            return try body.response(
                ModifyRecordsResponse(
                    failedRecordSaves: modification.saves.map {
                        .init(recordID: $0.recordID, error: Self.sharedZoneNotFound($0.recordID.zoneID))
                    },
                    failedRecordDeletes: modification.deletes.map {
                        .init(recordID: $0, error: Self.sharedZoneNotFound($0.zoneID))
                    }))
        }
        let outcome = try await store.modifyRecords(owner: user, request: modification, limits: limits, now: Date())
        if outcome.changed {
            await pushHub.notify(user: user, scope: .private, excludingDevice: device)
        }
        return body.response(bytes: outcome.responseBody)
    }

    func fetchZoneChanges(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let scope = try Self.scope(context)
        let fetch = try await body.decode(FetchZoneChangesRequest.self, from: request)
        try RequestValidation.validate(fetch.zoneID, owner: user, context: "zoneID")
        let limit = try resultsLimit(fetch.resultsLimit)
        guard scope == .private else { throw Self.sharedZoneNotFound(fetch.zoneID) }
        let zoneName = fetch.zoneID.zoneName
        let cursor = try fetch.since.map {
            try ChangeCursor(token: $0, expecting: .zone, owner: user, scope: scope, zoneName: zoneName)
        }
        let page = try await store.zoneChanges(owner: user, zoneName: zoneName, since: cursor, limit: limit)
        let zoneID = Self.ownZoneID(zoneName)
        // Written by hand: records dominate the body, and their stored fields splice in as they are.
        var writer = JSONWriter(capacity: 300 * (page.modifications.count + page.deletions.count + 1))
        writer.raw("{\"modifications\":")
        writer.array(page.modifications) { $1.write(to: &$0, in: zoneID) }
        writer.raw(",\"deletions\":")
        writer.array(page.deletions) { writer, deletion in
            writer.raw("{\"recordID\":")
            writer.recordID(RecordValue.ID(recordName: deletion.recordName, zoneID: zoneID))
            writer.raw(",\"recordType\":")
            writer.string(deletion.recordType)
            writer.raw("}")
        }
        writer.raw(",\"changeToken\":")
        writer.string(page.cursor.token.data.base64EncodedString())
        writer.raw(page.moreComing ? ",\"moreComing\":true}" : ",\"moreComing\":false}")
        return body.response(bytes: writer.bytes)
    }

    func lookupRecords(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let scope = try Self.scope(context)
        let lookup = try await body.decode(LookupRecordsRequest.self, from: request)
        try RequestValidation.validate(itemCount: lookup.recordIDs.count, limits: limits)
        for (index, recordID) in lookup.recordIDs.enumerated() {
            try RequestValidation.validate(recordID, owner: user, context: "recordIDs[\(index)]")
        }
        guard scope == .private else {
            return try body.response(
                LookupRecordsResponse(
                    records: [],
                    failures: lookup.recordIDs.map { .init(recordID: $0, error: Self.sharedZoneNotFound($0.zoneID)) }))
        }
        let outcome = try await store.lookupRecords(owner: user, keys: lookup.recordIDs.map(RecordKey.init))
        var found: [(row: StoredRecord, zoneID: RecordZone.ID)] = []
        var failures: [LookupRecordsResponse.Failure] = []
        for (recordID, item) in zip(lookup.recordIDs, outcome.items) {
            switch item {
            case .found(let stored): found.append((stored, recordID.zoneID))
            case .zoneNotFound:
                failures.append(
                    .init(
                        recordID: recordID,
                        error: SyncError(.zoneNotFound, "zone '\(recordID.zoneID.zoneName)' does not exist")))
            case .unknownItem:
                failures.append(
                    .init(
                        recordID: recordID,
                        error: SyncError(.unknownItem, "record '\(recordID.recordName)' does not exist")))
            }
        }
        // Written by hand, as zone changes are: the stored fields splice in without being decoded.
        var writer = JSONWriter(capacity: 300 * (found.count + failures.count + 1))
        writer.raw("{\"records\":")
        writer.array(found) { $1.row.write(to: &$0, in: $1.zoneID) }
        writer.raw(",\"failures\":")
        try writer.encodable(failures)
        writer.raw("}")
        return body.response(bytes: writer.bytes)
    }

    private func resultsLimit(_ requested: Int?) throws -> Int {
        guard let requested else { return limits.defaultFetchResultsLimit }
        guard requested >= 1 else {
            throw SyncError(.invalidArguments, "resultsLimit must be at least 1 (it was \(requested))")
        }
        return min(requested, limits.maximumFetchResultsLimit)
    }
}
