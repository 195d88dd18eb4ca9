import Foundation
import SyncCore

/// Shares, once for every backend: every change to a share runs under its owner's lock, as every
/// other change to the owner's data does, and writes the share's record as the owner's next change.
extension RecordStoreBackend {
    public func saveShare(
        owner: String, zoneName: String, recordName: String, root: ShareRoot?, now: Date,
        _ change: @escaping @Sendable (StoredShare?) throws -> StoredShare
    ) async throws -> StoredShare {
        let defaultQuotaBytes = self.defaultQuotaBytes
        return try await write { transaction in
            _ = try await transaction.lockAccount(owner: owner)
            guard try await transaction.zoneIsLive(owner: owner, zoneName: zoneName) else {
                throw SyncError(.zoneNotFound, "zone '\(zoneName)' does not exist; save the zone before sharing it")
            }
            let existing = try await transaction.shares(owner: owner, zoneName: zoneName, recordName: recordName).first
            func stored(_ name: String) async throws -> StoredRecord? {
                try await transaction.storedRecord(
                    owner: owner, key: RecordKey(zoneName: zoneName, recordName: name), live: false)
            }
            var storedRoot: StoredRecord?
            if let root { storedRoot = try await stored(root.record.recordID.recordName) }
            let place = SharePlace(saving: recordName, in: zoneName, existing: existing, root: root)
            try ShareRules.checkSave(
                place, existing: existing,
                zoneShares: try await transaction.shares(owner: owner, zoneName: zoneName, recordName: nil),
                root: root?.record, storedRoot: storedRoot, atName: try await stored(recordName))
            if let root {
                try await transaction.saveRoot(
                    root, shareName: recordName, owner: owner, now: now,
                    usage: try await transaction.storageUsage(owner: owner, defaultQuotaBytes: defaultQuotaBytes))
            }
            let share = try change(existing)
            try await transaction.write(share, actor: owner, now: now)
            return share
        }
    }

    public func updateShare(
        token: String, actor: String, now: Date, _ change: @escaping @Sendable (StoredShare) throws -> StoredShare
    ) async throws -> StoredShare {
        try await write { transaction in
            guard let place = try await transaction.shareLocation(token: token) else { throw ShareRules.notOpen }
            _ = try await transaction.lockAccount(owner: place.owner)
            // Read again under the lock: the share may have changed or gone meanwhile.
            guard
                let stored = try await transaction.shares(
                    owner: place.owner, zoneName: place.zoneName, recordName: place.recordName
                ).first, stored.token == token
            else { throw ShareRules.notOpen }
            let share = try change(stored)
            try await transaction.write(share, actor: actor, now: now)
            return share
        }
    }

    public func deleteShare(owner: String, zoneName: String, recordName: String, now: Date) async throws
        -> StoredShare?
    {
        try await write { transaction in
            _ = try await transaction.lockAccount(owner: owner)
            guard
                let share = try await transaction.shares(owner: owner, zoneName: zoneName, recordName: recordName)
                    .first
            else { return nil }
            try await transaction.deleteShareRows(owner: owner, zoneName: zoneName, recordName: recordName)
            if let rootName = share.rootRecordName,
                let root = try await transaction.storedRecord(
                    owner: owner, key: RecordKey(zoneName: zoneName, recordName: rootName), live: true)
            {
                // The root stays, no longer shared: a new version without its `share`.
                let record = try root.record(in: RecordZone.ID(zoneName: zoneName))
                try await transaction.saveRoot(
                    ShareRoot(record: record, limits: ServerLimits(maximumRecordBytes: .max)), shareName: nil,
                    owner: owner, now: now)
            }
            try await transaction.writeShareRecord(nil, at: SharePlace(share), owner: owner, actor: owner, now: now)
            return share
        }
    }

    public func share(owner: String, zoneName: String, recordName: String) async throws -> StoredShare? {
        try await read { try await $0.shares(owner: owner, zoneName: zoneName, recordName: recordName).first }
    }

    public func shares(owner: String, zoneName: String) async throws -> [StoredShare] {
        try await read { try await $0.shares(owner: owner, zoneName: zoneName, recordName: nil) }
    }

    public func share(token: String) async throws -> StoredShare? {
        try await read { transaction in
            guard let place = try await transaction.shareLocation(token: token) else { return nil }
            return try await transaction.shares(
                owner: place.owner, zoneName: place.zoneName, recordName: place.recordName
            ).first
        }
    }
}

extension StoreTransaction {
    /// Replaces the share's rows with `share` and writes its record.
    fileprivate func write(_ share: StoredShare, actor: String, now: Date) async throws {
        try await deleteShareRows(owner: share.owner, zoneName: share.zoneName, recordName: share.recordName)
        try await insertShareRows(share)
        try await writeShareRecord(share, at: SharePlace(share), owner: share.owner, actor: actor, now: now)
    }

    /// Saves a record-hierarchy share's root as the owner's change, with `shareName` as its share
    /// (nil: no longer shared); throws the save's error when it cannot be saved.
    /// A root saved with a new share counts against the owner's quota (`usage`); one left as the
    /// share goes (nil) always passes.
    fileprivate func saveRoot(
        _ root: ShareRoot, shareName: String?, owner: String, now: Date, usage: StorageUsage? = nil
    ) async throws {
        var hierarchy = RecordHierarchy.Context()
        hierarchy.shareNames[RecordKey(root.record.recordID)] = .some(shareName)
        let request = ModifyRecordsRequest(
            saves: [root.record], savePolicy: shareName == nil ? .allKeys : .ifServerRecordUnchanged)
        let plan = try await plan(
            request, owner: owner, modifier: owner, writer: "", limits: root.limits, now: now,
            currentSeq: try await lockAccount(owner: owner).current, savedFields: nil, hierarchy: hierarchy,
            usage: usage)
        if let failure = plan.failedSaves.first { throw failure.error }
        try await apply(plan, owner: owner, now: now)
    }

    /// Writes the share's record (its tombstone for nil) as the owner's next change.
    fileprivate func writeShareRecord(
        _ share: StoredShare?, at place: SharePlace, owner: String, actor: String, now: Date
    ) async throws {
        let seq = try await lockAccount(owner: owner).current + 1
        let previous = try await storedRecord(
            owner: owner, key: RecordKey(zoneName: place.zoneName, recordName: place.recordName), live: false)
        let row = ShareRules.record(
            of: share, at: place, previous: previous, actor: actor, seq: seq, now: now.millisecondsSince1970)
        try await upsert([row], owner: owner)
        try await setZoneChangeSeq(owner: owner, zoneName: place.zoneName, seq: seq, at: now.millisecondsSince1970)
        try await setChangeSeq(owner: owner, seq: seq)
    }
}
