import Foundation
import Hummingbird
import SyncCore

/// The shared database: the zones other users shared with the caller and the caller accepted,
/// named with their owners' user record names. Every request is checked against the caller's
/// shares first; a zone they cannot see answers as one that does not exist, and in a zone they see
/// through record-hierarchy shares, so does every record outside those hierarchies.
extension DatabaseRoutes {
    private func sharedZones(_ user: String) async throws -> [RecordZone.ID: SharedZone] {
        Dictionary(
            try await store.sharedZones(user: user).map { ($0.zoneID, $0) }, uniquingKeysWith: { first, _ in first })
    }

    static func notShared(_ zoneID: RecordZone.ID) -> SyncError {
        SyncError(
            .zoneNotFound,
            "zone '\(zoneID.zoneName)' of '\(zoneID.ownerName)' is not shared with you (or no longer); ask its owner to share it"
        )
    }

    static func readOnly(_ zoneID: RecordZone.ID) -> SyncError {
        SyncError(
            .permissionFailure,
            "zone '\(zoneID.zoneName)' is shared with you read-only; ask its owner for read-write access to change it")
    }

    func listSharedZones(user: String) async throws -> Response {
        try body.response(
            ListZonesResponse(
                zones: try await store.sharedZones(user: user).map {
                    RecordZone(zoneID: $0.zoneID, encryptionKey: $0.encryptionKey, sharedKey: $0.sharedKey)
                }))
    }

    /// Saves are refused (zones are created by their owners); deleting a zone leaves its shares.
    func modifySharedZones(user: String, device: String?, _ modification: ModifyZonesRequest) async throws
        -> Response
    {
        let shared = try await sharedZones(user)
        var response = ModifyZonesResponse(
            failedZoneSaves: modification.saves.map {
                .init(
                    zone: $0,
                    error: SyncError(
                        .permissionFailure,
                        "zones cannot be created in the shared database; save them in the private database"))
            })
        for zoneID in modification.deletes {
            guard shared[zoneID] != nil else {
                response.failedZoneDeletes.append(.init(zoneID: zoneID, error: Self.notShared(zoneID)))
                continue
            }
            try await leave(zoneID, user: user, device: device)
            response.deletedZoneIDs.append(zoneID)
        }
        return try body.response(response)
    }

    /// Leaves the shares of a zone shared with `user` (only the one whose record is `shareRecordName`,
    /// when given), and tells whoever can see it.
    private func leave(_ zoneID: RecordZone.ID, only shareRecordName: String? = nil, user: String, device: String?)
        async throws
    {
        let shares = try await store.shares(owner: zoneID.ownerName, zoneName: zoneID.zoneName).filter { share in
            guard let participant = share.participant(user) else { return false }
            return shareRecordName.map { $0 == share.recordName } != false && participant.role != .owner
                && participant.status != .removed
        }
        for share in shares {
            _ = try await store.updateShare(token: share.token, actor: user, now: configuration.clock.now()) {
                try ShareRules.left($0, by: user)
            }
        }
        await audience.notify(owner: zoneID.ownerName, zoneNames: [zoneID.zoneName], by: user, device: device)
        await pushHub.notify(user: user, scope: .shared, excludingDevice: device)
    }

    func fetchSharedDatabaseChanges(user: String, _ fetch: FetchDatabaseChangesRequest) async throws -> Response {
        var cursor: SharedDatabaseCursor?
        if let since = fetch.since {
            cursor = try SharedDatabaseCursor(content: try await tokens.content(of: since), user: user)
        }
        let zones = try await store.sharedZones(user: user)
        let (modified, deleted, restarted) = cursor?.changes(now: zones) ?? (zones.map(\.zoneID), [], [])
        let next = SharedDatabaseCursor(user: user, zones: zones.filter { !restarted.contains($0.zoneID) })
        return try body.response(
            FetchDatabaseChangesResponse(
                modifications: modified, deletions: deleted.map { .init(zoneID: $0, reason: .deleted) },
                changeToken: try await tokens.token(for: next), moreComing: !restarted.isEmpty))
    }

    /// Checks every item against the caller's shares, writes what they may write as its owner's
    /// change made by them, and answers the rest with its error.
    func modifySharedRecords(
        user: String, device: String?, writer: String, _ modification: ModifyRecordsRequest
    ) async throws -> Response {
        let owners = Set((modification.saves.map(\.recordID) + modification.deletes).map(\.zoneID.ownerName))
        guard owners.count <= 1 else {
            throw SyncError(
                .invalidArguments,
                "this request changes zones of \(owners.count) owners; send each owner's zones in a request of its own")
        }
        let shared = try await sharedZones(user)
        /// Whether the record is a share of its zone the caller sees.
        func isShare(_ recordID: RecordValue.ID, type: String? = nil) -> Bool {
            ShareRules.isShare(recordName: recordID.recordName, recordType: type)
                || shared[recordID.zoneID]?.hierarchies.contains { $0.shareRecordName == recordID.recordName } == true
        }
        func refusal(_ recordID: RecordValue.ID, isShare: Bool) -> SyncError? {
            guard let zone = shared[recordID.zoneID] else { return Self.notShared(recordID.zoneID) }
            if isShare {
                return SyncError(
                    .permissionFailure,
                    "only the owner changes a share; to leave it, delete the share (or the zone) from your shared database"
                )
            }
            // In record-hierarchy shares, the store checks each record against the hierarchies.
            return !zone.isZoneWide || zone.permission == .readWrite ? nil : Self.readOnly(recordID.zoneID)
        }
        var allowed = modification
        allowed.saves = []
        allowed.deletes = []
        var refused = ModifyRecordsResponse()
        var leaving: [RecordValue.ID] = []
        for record in modification.saves {
            if let error = refusal(record.recordID, isShare: isShare(record.recordID, type: record.recordType)) {
                refused.failedRecordSaves.append(.init(recordID: record.recordID, error: error))
            } else {
                allowed.saves.append(record)
            }
        }
        for recordID in modification.deletes {
            // Deleting the share from one's shared database is leaving it.
            if isShare(recordID), shared[recordID.zoneID] != nil {
                leaving.append(recordID)
            } else if let error = refusal(recordID, isShare: false) {
                refused.failedRecordDeletes.append(.init(recordID: recordID, error: error))
            } else {
                allowed.deletes.append(recordID)
            }
        }
        if modification.atomic { Self.abandonAtomicZones(of: &allowed, refused: &refused) }
        var response = refused
        if let owner = owners.first, !allowed.saves.isEmpty || !allowed.deletes.isEmpty {
            // Request and writer IDs are kept per owner: a participant's never meets the owner's or another's.
            allowed.clientRequestID = modification.clientRequestID.map { "\(user)/\($0)" }
            var access: [String: RecordHierarchy.Access] = [:]
            for zone in shared.values where zone.owner == owner {
                if let readable = zone.visibleRoots {
                    access[zone.zoneName] = .init(readableRoots: readable, writableRoots: zone.writableRoots)
                }
            }
            let outcome = try await store.modifyRecords(
                owner: owner, modifier: user, writer: Self.participantWriter(writer, user: user), request: allowed,
                limits: limits, now: configuration.clock.now(), hierarchyAccess: access)
            let written = try JSONReader.decode(ModifyRecordsResponse.self, from: Data(outcome.responseBody))
            // The store answers with the record IDs as sent, which name the zone as the participant does.
            response.savedRecords = written.savedRecords
            response.deletedRecordIDs = written.deletedRecordIDs
            response.failedRecordSaves += written.failedRecordSaves
            response.failedRecordDeletes += written.failedRecordDeletes
            if outcome.changed {
                let zones = Set((allowed.saves.map(\.recordID) + allowed.deletes).map(\.zoneID.zoneName))
                await audience.notify(owner: owner, zoneNames: zones, by: user, device: device)
            }
        }
        for recordID in leaving {
            let zoneWide = recordID.recordName == Share.zoneWideRecordName
            try await leave(recordID.zoneID, only: zoneWide ? nil : recordID.recordName, user: user, device: device)
            response.deletedRecordIDs.append(recordID)
        }
        return try body.response(response)
    }

    /// In an atomic request, a zone with a refused item applies nothing.
    private static func abandonAtomicZones(of allowed: inout ModifyRecordsRequest, refused: inout ModifyRecordsResponse)
    {
        let failedZones = Set(
            (refused.failedRecordSaves.map(\.recordID) + refused.failedRecordDeletes.map(\.recordID)).map(\.zoneID))
        guard !failedZones.isEmpty else { return }
        let abandoned = RecordModificationPlanner.abandonedInAtomicZone
        for record in allowed.saves where failedZones.contains(record.recordID.zoneID) {
            refused.failedRecordSaves.append(
                .init(recordID: record.recordID, error: abandoned(record.recordID.zoneID.zoneName)))
        }
        for recordID in allowed.deletes where failedZones.contains(recordID.zoneID) {
            refused.failedRecordDeletes.append(.init(recordID: recordID, error: abandoned(recordID.zoneID.zoneName)))
        }
        allowed.saves.removeAll { failedZones.contains($0.recordID.zoneID) }
        allowed.deletes.removeAll { failedZones.contains($0.zoneID) }
    }

    func fetchSharedZoneChanges(user: String, _ fetch: FetchZoneChangesRequest, limit: Int) async throws -> Response {
        guard let zone = try await sharedZones(user)[fetch.zoneID] else { throw Self.notShared(fetch.zoneID) }
        let owner = fetch.zoneID.ownerName
        var fetch = fetch
        fetch.excludingWriter = fetch.excludingWriter.map { Self.participantWriter($0, user: user) }
        if let roots = zone.visibleRoots {
            return try await hierarchyChangesResponse(owner: owner, fetch: fetch, visibleRoots: roots, limit: limit)
        }
        if try await cursor(
            from: fetch.since, expecting: .zone, owner: owner, scope: .private, zoneName: zone.zoneName)?.roots != nil
        {
            throw SyncError(
                .changeTokenExpired,
                "zone '\(zone.zoneName)' is shared with you whole now, not record by record; fetch it again without a token"
            )
        }
        return try await zoneChangesResponse(owner: owner, fetch: fetch, limit: limit)
    }

    /// A participant's writer ID as stored in the owner's rows: theirs alone, so that nobody can
    /// name another's writer to hide changes from them.
    private static func participantWriter(_ writer: String, user: String) -> String {
        writer.isEmpty ? "" : "\(user)/\(writer)"
    }

    /// The records of `recordIDs` in zones shared with `user` that the user sees, as a participant sees
    /// them, each with the zone ID as named; and for each of the others, the error that says it is not
    /// there (the same for one that does not exist and one outside the caller's shares).
    func sharedRecords(user: String, _ recordIDs: [RecordValue.ID]) async throws -> (
        found: [(row: StoredRecord, zoneID: RecordZone.ID)], failures: [LookupRecordsResponse.Failure]
    ) {
        let shared = try await sharedZones(user)
        // Each ID's answer, in the request's order whatever the owner: the order says nothing.
        var answers = [LookupOutcome.Item?](repeating: nil, count: recordIDs.count)
        var owned: [String: [Int]] = [:]
        for (index, recordID) in recordIDs.enumerated() where shared[recordID.zoneID] != nil {
            owned[recordID.zoneID.ownerName, default: []].append(index)
        }
        for (owner, indices) in owned {
            let keys = indices.map { RecordKey(recordIDs[$0]) }
            let outcome = try await store.lookupRecords(owner: owner, keys: keys)
            for (index, item) in zip(indices, outcome.items) { answers[index] = item }
        }
        var found: [(row: StoredRecord, zoneID: RecordZone.ID)] = []
        var failures: [LookupRecordsResponse.Failure] = []
        for (recordID, answer) in zip(recordIDs, answers) {
            guard let zone = shared[recordID.zoneID], let answer else {
                failures.append(.init(recordID: recordID, error: Self.notShared(recordID.zoneID)))
                continue
            }
            switch answer {
            case .found(let row):
                if let roots = zone.visibleRoots {
                    // Outside the caller's hierarchies, a record answers as one that does not exist.
                    if SharedHierarchyView(visibleRoots: roots).shows(row) {
                        found.append((RecordHierarchy.seenByParticipant(row), recordID.zoneID))
                    } else {
                        failures.append(.init(recordID: recordID, error: Self.noRecord(recordID)))
                    }
                } else {
                    found.append((row, recordID.zoneID))
                }
            case .zoneNotFound: failures.append(.init(recordID: recordID, error: Self.notShared(recordID.zoneID)))
            case .unknownItem: failures.append(.init(recordID: recordID, error: Self.noRecord(recordID)))
            }
        }
        return (found, failures)
    }

    private static func noRecord(_ recordID: RecordValue.ID) -> SyncError {
        SyncError(.unknownItem, "record '\(recordID.recordName)' does not exist")
    }
}
