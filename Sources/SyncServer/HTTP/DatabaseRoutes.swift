import Foundation
import HTTPTypes
import Hummingbird
import Logging
import SyncCore

/// The routes under `/v1/databases/{scope}`: zones, records and their changes.
///
/// The private database is the user's own. The shared database holds the zones other users share
/// with this one (see `DatabaseRoutes+Shared.swift`).
struct DatabaseRoutes {
    let store: any RecordStore
    let pushHub: PushHub
    let configuration: SyncServerConfiguration
    let body: BodyCoding
    /// Signs the change tokens handed out, and verifies those sent back.
    let tokens: ChangeTokenSigner

    static let deviceHeader = HTTPField.Name("X-Device-ID")!
    /// Names the writer (an engine instance) of a modification, so that its fetches can leave out
    /// what it saved (`excludingWriter`).
    static let writerHeader = HTTPField.Name("X-Writer-ID")!

    static func deviceID(_ request: Request) throws -> String? {
        try DeviceID.validated(request.headers[deviceHeader], source: "the X-Device-ID header")
    }

    var limits: ServerLimits { configuration.limits }
    /// Who to tell of a change to a zone.
    var audience: ZoneAudience { ZoneAudience(store: store, pushHub: pushHub) }

    static func scope(_ context: SyncRequestContext) throws -> DatabaseScope {
        let name = context.parameters.get("scope") ?? ""
        guard let scope = DatabaseScope(rawValue: name) else {
            throw SyncError(.invalidArguments, "there is no database '\(name)'; use 'private' or 'shared'")
        }
        return scope
    }

    private static func ownZoneID(_ zoneName: String) -> RecordZone.ID {
        RecordZone.ID(zoneName: zoneName)
    }

    // MARK: Zones

    func listZones(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let scope = try Self.scope(context)
        try await body.checkOptionalObject(in: request)
        guard scope == .private else { return try await listSharedZones(user: user) }
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
        let owner = scope == .private ? user : nil
        for (index, zone) in modification.saves.enumerated() {
            try RequestValidation.validate(zone.zoneID, owner: owner, context: "saves[\(index)]")
        }
        for (index, zoneID) in modification.deletes.enumerated() {
            try RequestValidation.validate(zoneID, owner: owner, context: "deletes[\(index)]")
        }
        guard scope == .private else { return try await modifySharedZones(user: user, device: device, modification) }
        // Participants of a zone about to be deleted lose it: they are told after.
        let losing = try await store.audience(owner: user, zoneNames: Set(modification.deletes.map(\.zoneName)))
        let outcome = try await store.modifyZones(
            owner: user,
            saves: modification.saves.map { StoredZone(zoneName: $0.zoneID.zoneName, encryptionKey: $0.encryptionKey) },
            deletes: modification.deletes.map(\.zoneName), now: configuration.clock.now())
        if outcome.changed {
            await pushHub.notify(user: user, scope: .private, excludingDevice: device)
            for participant in losing.sorted() {
                await pushHub.notify(user: participant, scope: .shared, excludingDevice: nil)
            }
        }
        await purgeRecords(ofDeletedZones: outcome.deleted, owner: user, context: context)
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

    /// Removes the records of zones just deleted, in chunks that let other writers in between. The
    /// zones are gone for everyone already (their tombstones are written, their usage no longer
    /// counts), so a failure here is only logged: compaction, or the zone's next creation, finishes it.
    func purgeRecords(ofDeletedZones zoneNames: [String], owner: String, context: SyncRequestContext) async {
        await Self.purgeRecords(ofDeletedZones: zoneNames, owner: owner, store: store, context: context)
    }

    /// ``purgeRecords(ofDeletedZones:owner:context:)`` for routes that have a store but no database routes.
    static func purgeRecords(
        ofDeletedZones zoneNames: [String], owner: String, store: any RecordStore, context: SyncRequestContext
    ) async {
        guard !zoneNames.isEmpty else { return }
        do {
            try await store.purgeDeletedZones(owner: owner, zoneNames: zoneNames)
        } catch {
            context.logger.error(
                "removing deleted zones' records failed; compaction will finish it",
                metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    func fetchDatabaseChanges(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let scope = try Self.scope(context)
        let fetch = try await body.decode(FetchDatabaseChangesRequest.self, from: request)
        let limit = try resultsLimit(fetch.resultsLimit)
        guard scope == .private else { return try await fetchSharedDatabaseChanges(user: user, fetch) }
        let cursor = try await cursor(
            from: fetch.since, expecting: .database, owner: user, scope: scope, zoneName: nil)
        let page = try await store.databaseChanges(owner: user, since: cursor, limit: limit)
        return try body.response(
            FetchDatabaseChangesResponse(
                modifications: page.modifiedZoneNames.map(Self.ownZoneID),
                deletions: page.deletions.map { .init(zoneID: Self.ownZoneID($0.zoneName), reason: $0.reason) },
                changeToken: try await tokens.token(for: page.cursor), moreComing: page.moreComing))
    }

    // MARK: Records

    func modifyRecords(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let scope = try Self.scope(context)
        let device = try Self.deviceID(request)
        let writer = try DeviceID.validated(request.headers[Self.writerHeader], source: "the X-Writer-ID header") ?? ""
        let modification = try await body.decode(ModifyRecordsRequest.self, from: request)
        try RequestValidation.validate(modification, owner: scope == .private ? user : nil, limits: limits)
        guard scope == .private else {
            return try await modifySharedRecords(user: user, device: device, writer: writer, modification)
        }
        if let share = modification.saves.first(where: {
            ShareRules.isShare(recordName: $0.recordID.recordName, recordType: $0.recordType)
        })?.recordID ?? modification.deletes.first(where: { ShareRules.isShare(recordName: $0.recordName) }) {
            throw SyncError(
                .invalidArguments,
                "record '\(share.recordName)' in zone '\(share.zoneID.zoneName)' is a share: change shares with POST /v1/shares/save and /v1/shares/delete"
            )
        }
        let zones = Set((modification.saves.map(\.recordID) + modification.deletes).map(\.zoneID.zoneName))
        // Deleting a share's root deletes the share: its participants are told, though they no longer see the zone.
        let formerly =
            modification.deletes.isEmpty ? [] : try await store.audience(owner: user, zoneNames: zones)
        let outcome = try await store.modifyRecords(
            owner: user, modifier: user, writer: writer, request: modification, limits: limits,
            now: configuration.clock.now())
        if outcome.changed {
            await audience.notify(owner: user, zoneNames: zones, by: user, device: device, formerly: formerly)
        }
        return body.response(bytes: outcome.responseBody)
    }

    func fetchZoneChanges(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let scope = try Self.scope(context)
        let fetch = try await body.decode(FetchZoneChangesRequest.self, from: request)
        try RequestValidation.validate(fetch.zoneID, owner: scope == .private ? user : nil, context: "zoneID")
        _ = try DeviceID.validated(fetch.excludingWriter, source: "excludingWriter")
        try RequestValidation.validate(desiredKeys: fetch.desiredKeys)
        let limit = try resultsLimit(fetch.resultsLimit)
        guard scope == .private else { return try await fetchSharedZoneChanges(user: user, fetch, limit: limit) }
        return try await zoneChangesResponse(owner: user, fetch: fetch, limit: limit)
    }

    /// A page of changes of `owner`'s zone, named in the answer as the request named it.
    func zoneChangesResponse(owner: String, fetch: FetchZoneChangesRequest, limit: Int) async throws -> Response {
        let zoneName = fetch.zoneID.zoneName
        let cursor = try await cursor(
            from: fetch.since, expecting: .zone, owner: owner, scope: .private, zoneName: zoneName)
        let page = try await store.zoneChanges(
            owner: owner, zoneName: zoneName, since: cursor, limit: limit, excludingWriter: fetch.excludingWriter)
        let zoneID = owner == fetch.zoneID.ownerName ? fetch.zoneID : Self.ownZoneID(zoneName)
        return try await zoneChangesResponse(page, in: zoneID, desiredKeys: fetch.desiredKeys)
    }

    /// The cursor of a token a client sent: signed by this server, and for this database or zone.
    func cursor(
        from token: ServerChangeToken?, expecting kind: ChangeCursor.Kind, owner: String, scope: DatabaseScope,
        zoneName: String?
    ) async throws -> ChangeCursor? {
        guard let token else { return nil }
        return try ChangeCursor(
            content: try await tokens.content(of: token), expecting: kind, owner: owner, scope: scope,
            zoneName: zoneName)
    }

    /// A zone changes answer, naming records in `zoneID`, their fields cut to `desiredKeys`.
    func zoneChangesResponse(_ page: ZoneChangePage, in zoneID: RecordZone.ID, desiredKeys: [String]?) async throws
        -> Response
    {
        let token = try await tokens.token(for: page.cursor)
        let modifications = try page.modifications.map { try $0.selecting(desiredKeys) }
        // Written by hand: records dominate the body, and their stored fields splice in as they are.
        var writer = JSONWriter(capacity: 300 * (page.modifications.count + page.deletions.count + 1))
        writer.raw("{\"modifications\":")
        writer.array(modifications) { $1.write(to: &$0, in: zoneID) }
        writer.raw(",\"deletions\":")
        writer.array(page.deletions) { writer, deletion in
            writer.raw("{\"recordID\":")
            writer.recordID(RecordValue.ID(recordName: deletion.recordName, zoneID: zoneID))
            writer.raw(",\"recordType\":")
            writer.string(deletion.recordType)
            writer.raw("}")
        }
        writer.raw(",\"changeToken\":")
        writer.string(token.data.base64EncodedString())
        writer.raw(page.moreComing ? ",\"moreComing\":true}" : ",\"moreComing\":false}")
        return body.response(bytes: writer.bytes)
    }

    func lookupRecords(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let scope = try Self.scope(context)
        let lookup = try await body.decode(LookupRecordsRequest.self, from: request)
        try RequestValidation.validate(itemCount: lookup.recordIDs.count, limits: limits)
        try RequestValidation.validate(desiredKeys: lookup.desiredKeys)
        for (index, recordID) in lookup.recordIDs.enumerated() {
            try RequestValidation.validate(
                recordID, owner: scope == .private ? user : nil, context: "recordIDs[\(index)]")
        }
        let (found, failures) = try await visibleRecords(user: user, scope: scope, lookup.recordIDs)
        return try lookupResponse(found: found, failures: failures, desiredKeys: lookup.desiredKeys)
    }

    /// The records of `recordIDs` that `user` may read in `scope`'s database (their own, or as a
    /// participant sees them), each with the zone ID as named, and the error of each of the others:
    /// what `records/lookup` answers, and what an asset's download is authorised by.
    func visibleRecords(user: String, scope: DatabaseScope, _ recordIDs: [RecordValue.ID]) async throws -> (
        found: [(row: StoredRecord, zoneID: RecordZone.ID)], failures: [LookupRecordsResponse.Failure]
    ) {
        guard scope == .private else { return try await sharedRecords(user: user, recordIDs) }
        return Self.lookupItems(
            recordIDs, try await store.lookupRecords(owner: user, keys: recordIDs.map(RecordKey.init)))
    }

    /// The records a lookup found, each with the zone ID the request named, and the failures.
    private static func lookupItems(_ recordIDs: [RecordValue.ID], _ outcome: LookupOutcome) -> (
        found: [(row: StoredRecord, zoneID: RecordZone.ID)], failures: [LookupRecordsResponse.Failure]
    ) {
        var found: [(row: StoredRecord, zoneID: RecordZone.ID)] = []
        var failures: [LookupRecordsResponse.Failure] = []
        for (recordID, item) in zip(recordIDs, outcome.items) {
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
        return (found, failures)
    }

    func lookupResponse(
        found: [(row: StoredRecord, zoneID: RecordZone.ID)], failures: [LookupRecordsResponse.Failure],
        desiredKeys: [String]?
    ) throws -> Response {
        let found = try found.map { (row: try $0.row.selecting(desiredKeys), zoneID: $0.zoneID) }
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
