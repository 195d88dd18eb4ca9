import Foundation
import SyncCore

/// Saving and deleting records, once for every backend: replay → plan → apply → store the answer.
extension RecordStoreBackend {
    public func modifyRecords(
        owner: String, modifier: String, writer: String, request: ModifyRecordsRequest, limits: ServerLimits,
        now: Date, hierarchyAccess: [String: RecordHierarchy.Access]
    ) async throws -> RecordModificationOutcome {
        // Each save's fields are encoded once, for the replay hash and for storing.
        let savedFields = request.saves.map { FieldCoding.encode($0.fields) }
        let bodyHash = try request.clientRequestID.map { _ in
            try ReplayGuard.hash(of: request, savedFields: savedFields)
        }
        // Read from the request alone, before the lock every writer of the account waits for.
        let assetIDs = AssetRules.namedAssetIDs(request)
        let defaultQuotaBytes = self.defaultQuotaBytes
        return try await write { transaction in
            // First the account: every later read sees what the writers before this one committed.
            let currentSeq = try await transaction.lockAccount(owner: owner).current
            if let requestID = request.clientRequestID, let bodyHash,
                let earlier = try await transaction.requestAnswer(owner: owner, requestID: requestID)
            {
                let response = try ReplayGuard.replay(
                    storedHash: earlier.bodyHash, storedResponse: earlier.response, bodyHash: bodyHash,
                    requestID: requestID, request: request, savedFields: savedFields)
                return RecordModificationOutcome(responseBody: response, changed: false)
            }
            var hierarchy = RecordHierarchy.Context()
            hierarchy.access = hierarchyAccess
            let plan = try await transaction.plan(
                request, owner: owner, modifier: modifier, writer: writer, limits: limits, now: now,
                currentSeq: currentSeq, savedFields: savedFields, hierarchy: hierarchy,
                usage: try await transaction.storageUsage(owner: owner, defaultQuotaBytes: defaultQuotaBytes),
                assetIDs: assetIDs)
            try await transaction.apply(plan, owner: owner, now: now)
            let responseBody = try plan.responseBody(desiredKeys: request.desiredKeys)
            if let requestID = request.clientRequestID, let bodyHash {
                try await transaction.saveRequestAnswer(
                    owner: owner, requestID: requestID, bodyHash: bodyHash,
                    response: try ReplayGuard.stored(plan, responseBody: responseBody, for: request),
                    at: now.millisecondsSince1970)
            }
            return RecordModificationOutcome(responseBody: responseBody, changed: !plan.rows.isEmpty)
        }
    }

    public func lookupRecords(owner: String, keys: [RecordKey]) async throws -> LookupOutcome {
        try await read { transaction in
            var liveZones: [String: Bool] = [:]
            var outcome = LookupOutcome(items: [])
            for key in keys {
                if liveZones[key.zoneName] == nil {
                    liveZones[key.zoneName] = try await transaction.zoneIsLive(owner: owner, zoneName: key.zoneName)
                }
                if liveZones[key.zoneName] != true {
                    outcome.items.append(.zoneNotFound)
                } else if let record = try await transaction.storedRecord(owner: owner, key: key, live: true) {
                    outcome.items.append(.found(record))
                } else {
                    outcome.items.append(.unknownItem)
                }
            }
            return outcome
        }
    }
}

extension StoreTransaction {
    /// Reads what a modification touches and plans it (``RecordModificationPlanner``), with the
    /// deletions its deletions take along (``cascadeDeletions(in:owner:modifier:writer:now:)``), under
    /// the owner's lock (`currentSeq` read under it).
    /// - Parameter usage: the owner's storage in use and its limit, read in the same transaction; nil
    ///   leaves the quota unchecked. A plan that would grow usage past the limit throws `quotaExceeded`
    ///   (``StorageQuota``): nothing of the request is written.
    /// - Parameter assetIDs: ``AssetRules/namedAssetIDs(_:)`` of the request, when the caller read them
    ///   before the lock.
    func plan(
        _ request: ModifyRecordsRequest, owner: String, modifier: String, writer: String, limits: ServerLimits,
        now: Date, currentSeq: Int64, savedFields: [Data]?, hierarchy: RecordHierarchy.Context,
        usage: StorageUsage? = nil, assetIDs: [String]? = nil
    ) async throws -> RecordModificationPlanner.Plan {
        let keys = request.recordKeys
        var liveZones = Set<String>()
        for name in Set(keys.map(\.zoneName)) where try await zoneIsLive(owner: owner, zoneName: name) {
            liveZones.insert(name)
        }
        let existing = try await storedRecords(owner: owner, keys: keys.filter { liveZones.contains($0.zoneName) })
        var plan = try RecordModificationPlanner.plan(
            request, owner: owner, modifier: modifier, writer: writer, liveZones: liveZones, existing: existing,
            currentSeq: currentSeq, now: now.millisecondsSince1970, limits: limits, savedFields: savedFields,
            hierarchy: try await hierarchyContext(owner: owner, request: request, base: hierarchy),
            assets: try await assets(ids: assetIDs ?? AssetRules.namedAssetIDs(request)))
        // The deletions the deleteSelf references make are the zone owner's, whoever asked for the ones
        // that make them (``ReferenceActions``).
        try await cascadeDeletions(
            in: &plan, owner: owner, modifier: modifier, writer: writer, now: now.millisecondsSince1970)
        if let usage { try plan.checkQuota(usage, isOwner: modifier == owner) }
        return plan
    }

    /// Writes a plan: its rows, the records its hierarchy changes move, the shares it deletes, and the
    /// zones' and the owner's change numbers.
    func apply(_ plan: RecordModificationPlanner.Plan, owner: String, now: Date) async throws {
        let at = now.millisecondsSince1970
        try await upsert(
            plan.rows, owner: owner, storedBytes: plan.storedBytes, storedReferrers: plan.storedReferrers)
        let moves = try await moveDescendants(of: plan.rootChanges, owner: owner, seq: plan.endSeq, now: now)
        for share in plan.deletedShares {
            try await deleteShareRows(owner: owner, zoneName: share.zoneName, recordName: share.recordName)
        }
        for (zoneName, seq) in plan.zoneSeqs(after: moves) {
            try await setZoneChangeSeq(owner: owner, zoneName: zoneName, seq: seq, at: at)
        }
        try await setChangeSeq(owner: owner, seq: moves.seq)
        for (key, assetIDs) in plan.assetAttachments {
            try await attachAssets(assetIDs, to: AssetPlace(owner: owner, key: key), at: at)
        }
    }
}
