import Foundation
import SyncCore

/// CloudKit's rules for modifying records, as a pure function from what is stored to what to write.
///
/// Stores load the zones and records a request touches, call ``plan(_:owner:liveZones:existing:currentSeq:now:limits:)``
/// inside their write transaction and write the rows it returns.
public enum RecordModificationPlanner {
    /// What to write and what to answer.
    public struct Plan: Sendable {
        /// Rows to insert or replace: live records and tombstones.
        public var rows: [StoredRecord]
        /// The new change number of every zone that changed.
        public var zoneSeqs: [String: Int64]
        /// The owner's change number after the plan is applied.
        public var endSeq: Int64
        /// Each saved row with the record ID as the client sent it.
        public var saved: [(row: StoredRecord, recordID: RecordValue.ID)]
        public var failedSaves: [ModifyRecordsResponse.FailedRecordSave]
        public var deleted: [RecordValue.ID]
        public var failedDeletes: [ModifyRecordsResponse.FailedRecordDelete]
        /// Records whose shared root changed: the store moves the records below them along.
        public var rootChanges: [RecordHierarchy.RootChange] = []
        /// The record-hierarchy shares whose root was deleted: they go with it (their records'
        /// tombstones are among ``rows``; the store deletes their participants).
        public var deletedShares: [RecordKey] = []
        /// Saved records and the assets each names now: the store attaches those and detaches the
        /// others the record named (``AssetStore/attachAssets(_:to:now:)``).
        public var assetAttachments: [(key: RecordKey, assetIDs: [String])] = []
        /// The size of the stored fields of every record the plan was made with (0 for one not stored):
        /// what its rows replace, so that counting usage need not read them again.
        public var storedBytes: [RecordKey: Int64] = [:]
        /// Of the records ``storedBytes`` names, those whose stored version may hold deleteSelf
        /// references (``ReferenceActions``): the store clears their entries of the reference index, and
        /// knows that the others have none.
        public var storedReferrers: Set<RecordKey> = []

        /// Plans the deletion of the live record `stored`, at the owner's next change number after `seq`
        /// (which it advances): its tombstone, which keeps the record's place so that whoever saw the
        /// record hears it went; the records below it in a shared hierarchy lose their way to the root;
        /// and the share it is the root of goes with it, as in CloudKit.
        mutating func delete(_ stored: StoredRecord, seq: inout Int64, modifier: String, writer: String, now: Int64) {
            seq += 1
            let row = StoredRecord(
                key: stored.key, recordType: stored.recordType, fields: Data(),
                changeTag: RecordModificationPlanner.changeTag(seq), createdAt: now, creator: modifier,
                modifiedAt: now, modifier: modifier, seq: seq, isDeleted: true, writer: writer,
                parentName: stored.parentName, shareRoot: stored.shareRoot)
            rows.append(row)
            zoneSeqs[row.key.zoneName] = seq
            if let root = stored.shareRoot {
                rootChanges.append(.init(key: row.key, old: root, new: nil, includesRecord: false))
            }
            if let shareName = stored.shareName {
                seq += 1
                let share = RecordKey(zoneName: row.key.zoneName, recordName: shareName)
                rows.append(
                    StoredRecord(
                        key: share, recordType: Share.recordType, fields: Data(),
                        changeTag: RecordModificationPlanner.changeTag(seq), createdAt: now, creator: modifier,
                        modifiedAt: now, modifier: modifier, seq: seq, isDeleted: true, writer: writer,
                        shareRoot: stored.shareRoot))
                zoneSeqs[row.key.zoneName] = seq
                deletedShares.append(share)
            }
        }

        /// Throws `quotaExceeded` when writing the plan would grow `usage` past its limit
        /// (``StorageQuota``): nothing of the request is written then.
        /// - Parameter isOwner: whether the writer owns the account.
        public func checkQuota(_ usage: StorageUsage, isOwner: Bool) throws {
            try StorageQuota.check(
                growth: StorageQuota.growth(of: rows, replacing: storedBytes), usage: usage, isOwner: isOwner)
        }

        /// The response body: saved records with their stored fields spliced in (those of
        /// `desiredKeys`, when the request named them), or with none (`{}`).
        public func responseBody(withSavedFields: Bool = true, desiredKeys: [String]? = nil) throws -> [UInt8] {
            // Each saved row is written where it is, with the fields to send beside it: a copy of each
            // row was a third of writing an upload's answer, on the writer every account waits for.
            let sendsFields = withSavedFields && desiredKeys?.isEmpty != true
            let fields =
                sendsFields ? try saved.map { try FieldCoding.selecting(desiredKeys, from: $0.row.fields) } : []
            return try Self.responseBody(
                saved: Array(saved.indices), failedSaves: failedSaves, deleted: deleted, failedDeletes: failedDeletes
            ) { writer, index in
                saved[index].row.write(
                    to: &writer, in: saved[index].recordID.zoneID, fields: sendsFields ? fields[index] : Data())
            }
        }

        /// A modification's answer, each saved record written by `writeSaved`.
        static func responseBody<Saved>(
            saved: [Saved], failedSaves: [ModifyRecordsResponse.FailedRecordSave], deleted: [RecordValue.ID],
            failedDeletes: [ModifyRecordsResponse.FailedRecordDelete],
            writeSaved: (inout JSONWriter, Saved) -> Void
        ) throws -> [UInt8] {
            var writer = JSONWriter(capacity: 256 * (saved.count + 1))
            writer.raw("{\"savedRecords\":")
            writer.array(saved, writeSaved)
            writer.raw(",\"failedRecordSaves\":")
            try writer.encodable(failedSaves)
            writer.raw(",\"deletedRecordIDs\":")
            writer.array(deleted) { $0.recordID($1) }
            writer.raw(",\"failedRecordDeletes\":")
            try writer.encodable(failedDeletes)
            writer.raw("}")
            return writer.bytes
        }
    }

    /// Indirect: a save with the record it replaces is a few hundred bytes, and a request's decisions are
    /// held in arrays of 400; boxed, an array is a few kilobytes instead of a fresh 140 KB mapping (whose
    /// pages the kernel zeroes) for each request.
    private indirect enum Decision {
        /// Save with these fields; `createdAt` and `creator` are nil for a new record.
        case save(Save)
        case delete(StoredRecord)
        case failed(SyncError)

        var isFailure: Bool {
            if case .failed = self { return true }
            return false
        }
    }

    private struct Save {
        var recordType: String
        var fields: Data
        /// The stored live record it replaces, if any.
        var existing: StoredRecord?
        /// The shared root the record had: the live record's, or the tombstone's of a deleted one.
        var previousRoot: String?
        var shareName: String?
        var placement: RecordHierarchy.Placement
        /// The assets it names, when any are to be attached or detached (``AssetRules/attachment(_:fields:encoded:live:owner:modifier:assets:)``).
        var assetIDs: [String]?
    }

    /// Plans a modification.
    /// - Parameters:
    ///   - request: a request that passed ``RequestValidation``.
    ///   - owner: the signed-in user's record name.
    ///   - modifier: who makes the change, when not the owner (a participant in a shared zone).
    ///   - writer: the request's `X-Writer-ID` ("" for none), kept with each row it writes.
    ///   - liveZones: which of the zones the request names exist.
    ///   - existing: the stored rows (live or tombstones) for the records the request names.
    ///   - currentSeq: the owner's change number before this request.
    ///   - now: the modification time, in milliseconds since 1970.
    ///   - savedFields: each save's fields as ``FieldCoding`` encodes them, when the caller has
    ///     them already (encoding tens of thousands of fields is a large part of a save).
    ///   - hierarchy: what the store read of the records' hierarchies, and a participant's limits.
    ///   - assets: the stored rows of the assets the saves name (``AssetRules/namedAssetIDs(_:)``), read in
    ///     the same transaction.
    ///
    /// The plan's deletions take along what deleteSelf references make go (``ReferenceActions``), and
    /// the quota is checked on the whole (``Plan/checkQuota(_:isOwner:)``): both need the store, which
    /// does them after this.
    public static func plan(
        _ request: ModifyRecordsRequest, owner: String, modifier: String? = nil, writer: String = "",
        liveZones: Set<String>,
        existing: [RecordKey: StoredRecord],
        currentSeq: Int64, now: Int64, limits: ServerLimits, savedFields: [Data]? = nil,
        hierarchy: RecordHierarchy.Context = .init(), assets: [String: StoredAsset] = [:]
    ) throws -> Plan {
        let modifier = modifier ?? owner
        // Chains are walked as the request leaves them; a save that fails leaves its record as stored,
        // so the others are decided again without it until none fails anew. A save whose chain loops
        // through others waits for them; one still waiting then is part of a cycle.
        var hierarchyRequest = RecordHierarchy.Request(request, existing: existing, context: hierarchy)
        var decided = [Decision?](repeating: nil, count: request.saves.count)
        while true {
            var failedAnew = false
            for (index, record) in request.saves.enumerated() where decided[index]?.isFailure != true {
                let encoded = savedFields.flatMap { $0.indices.contains(index) ? $0[index] : nil }
                decided[index] = try decideSave(
                    record, policy: request.savePolicy, liveZones: liveZones,
                    existing: existing[RecordKey(record.recordID)], limits: limits, encodedFields: encoded,
                    hierarchy: hierarchyRequest, owner: owner, modifier: modifier, assets: assets)
                guard let decision = decided[index] else { continue }
                if decision.isFailure {
                    failedAnew = true
                    hierarchyRequest.saves[RecordKey(record.recordID)] = nil
                }
            }
            if !failedAnew { break }
        }
        var saveDecisions = zip(request.saves, decided).map { record, decision in
            decision
                ?? .failed(
                    SyncError(
                        .invalidArguments,
                        "record '\(record.recordID.recordName)' cannot have this parent: with the other parents of this request it would make a cycle; a hierarchy has no cycles"
                    ))
        }
        // An upload belongs to one record: of two saves naming it, the later fails.
        var claimed: [String: RecordKey] = [:]
        for index in saveDecisions.indices {
            guard case .save(let save) = saveDecisions[index], let ids = save.assetIDs else { continue }
            let key = RecordKey(request.saves[index].recordID)
            if let taken = ids.first(where: { claimed[$0].map { $0 != key } ?? false }) {
                saveDecisions[index] = .failed(AssetRules.namedTwice(request.saves[index].recordID, assetID: taken))
            } else {
                for id in ids { claimed[id] = key }
            }
        }
        var deleteDecisions: [Decision] = request.deletes.map { recordID in
            decideDelete(recordID, liveZones: liveZones, existing: existing[RecordKey(recordID)], hierarchy: hierarchy)
        }

        if request.atomic {
            let failedZones = Set(
                zip(request.saves.map(\.recordID) + request.deletes, saveDecisions + deleteDecisions)
                    .filter { $0.1.isFailure }.map { $0.0.zoneID.zoneName })
            func abandon(_ decisions: inout [Decision], _ ids: [RecordValue.ID]) {
                for (position, id) in ids.enumerated()
                where failedZones.contains(id.zoneID.zoneName) && !decisions[position].isFailure {
                    decisions[position] = .failed(abandonedInAtomicZone(id.zoneID.zoneName))
                }
            }
            abandon(&saveDecisions, request.saves.map(\.recordID))
            abandon(&deleteDecisions, request.deletes)
        }

        var seq = currentSeq
        var plan = Plan(
            rows: [], zoneSeqs: [:], endSeq: currentSeq, saved: [], failedSaves: [], deleted: [], failedDeletes: [])
        plan.rows.reserveCapacity(request.saves.count + request.deletes.count)
        plan.saved.reserveCapacity(request.saves.count)
        plan.storedBytes.reserveCapacity(request.saves.count + request.deletes.count)
        for key in request.recordKeys where liveZones.contains(key.zoneName) {
            let fields = existing[key]?.fields ?? Data()
            plan.storedBytes[key] = Int64(fields.count)
            if ReferenceActions.mayHoldDeleteSelf(fields) { plan.storedReferrers.insert(key) }
        }
        for (index, decision) in saveDecisions.enumerated() {
            let sent = request.saves[index]
            switch decision {
            case .save(let save):
                seq += 1
                let row = StoredRecord(
                    key: RecordKey(sent.recordID), recordType: save.recordType, fields: save.fields,
                    changeTag: changeTag(seq), createdAt: save.existing?.createdAt ?? now,
                    creator: save.existing?.creator ?? modifier, modifiedAt: now, modifier: modifier, seq: seq,
                    isDeleted: false, writer: writer, parentName: save.placement.parentName,
                    shareName: save.shareName, shareRoot: save.placement.shareRoot)
                plan.rows.append(row)
                plan.zoneSeqs[row.key.zoneName] = seq
                if let assetIDs = save.assetIDs { plan.assetAttachments.append((row.key, assetIDs)) }
                // A participant sees a root without its parent, which is outside their hierarchy.
                let restricted = hierarchy.access[row.key.zoneName] != nil
                plan.saved.append((restricted ? RecordHierarchy.seenByParticipant(row) : row, sent.recordID))
                if save.placement.shareRoot != save.previousRoot {
                    plan.rootChanges.append(
                        .init(
                            key: row.key, old: save.previousRoot, new: save.placement.shareRoot, includesRecord: true))
                }
            case .failed(let error):
                plan.failedSaves.append(.init(recordID: sent.recordID, error: error))
            case .delete:
                preconditionFailure("a save decided to delete")
            }
        }
        for (index, decision) in deleteDecisions.enumerated() {
            let recordID = request.deletes[index]
            switch decision {
            case .delete(let stored):
                plan.delete(stored, seq: &seq, modifier: modifier, writer: writer, now: now)
                plan.deleted.append(recordID)
            case .failed(let error):
                plan.failedDeletes.append(.init(recordID: recordID, error: error))
            case .save:
                preconditionFailure("a delete decided to save")
            }
        }
        plan.endSeq = seq
        return plan
    }

    /// The error of an item not applied because another in its atomic zone failed.
    static func abandonedInAtomicZone(_ zoneName: String) -> SyncError {
        SyncError(
            .batchRequestFailed,
            "not applied: another item in atomic zone '\(zoneName)' failed; fix that item and send the batch again")
    }

    /// Change tags are the owner's change number in base 36: unique and short.
    static func changeTag(_ seq: Int64) -> String {
        String(seq, radix: 36)
    }

    private static func decideSave(
        _ record: RecordValue, policy: SavePolicy, liveZones: Set<String>, existing: StoredRecord?,
        limits: ServerLimits, encodedFields: Data?, hierarchy: RecordHierarchy.Request, owner: String,
        modifier: String, assets: [String: StoredAsset]
    ) throws -> Decision? {
        let zoneName = record.recordID.zoneID.zoneName
        guard liveZones.contains(zoneName) else {
            return .failed(
                SyncError(.zoneNotFound, "zone '\(zoneName)' does not exist; save the zone first, then the record"))
        }
        let live = existing.flatMap { $0.isDeleted ? nil : $0 }
        // First, as it may hide what is stored: a participant learns nothing of records outside their share.
        let placement: RecordHierarchy.Placement
        switch RecordHierarchy.placement(of: record, in: hierarchy) {
        case .placed(let found): placement = found
        case .refused(let error): return .failed(error)
        case .undecided: return nil
        }
        let restricted = hierarchy.context.access[record.recordID.zoneID.zoneName] != nil
        var fields = record.fields
        var fieldsMerged = false
        if let live {
            if live.recordType != record.recordType {
                return .failed(
                    SyncError(
                        .invalidArguments,
                        "record '\(record.recordID.recordName)' has type '\(live.recordType)' on the server, not '\(record.recordType)'; a record's type cannot change"
                    ))
            }
            switch policy {
            case .ifServerRecordUnchanged:
                guard record.recordChangeTag == live.changeTag else {
                    let serverRecord = try (restricted ? RecordHierarchy.seenByParticipant(live) : live).record(
                        in: record.recordID.zoneID)
                    let why =
                        record.recordChangeTag.map {
                            "record '\(record.recordID.recordName)' changed on the server since change tag '\($0)'"
                        } ?? "record '\(record.recordID.recordName)' already exists on the server"
                    return .failed(
                        SyncError(
                            .serverRecordChanged,
                            "\(why); merge with the server's record (included) and save again with its change tag",
                            serverRecordValue: serverRecord))
                }
            case .changedKeys:
                var merged = try FieldCoding.decode(live.fields)
                let keys = record.changedKeys.isEmpty ? Set(record.fields.keys) : record.changedKeys
                for key in keys { merged[key] = record.fields[key] }
                fields = merged
                fieldsMerged = true
            case .allKeys:
                break
            }
        } else if policy == .ifServerRecordUnchanged, let tag = record.recordChangeTag {
            return .failed(
                SyncError(
                    .unknownItem,
                    "record '\(record.recordID.recordName)' does not exist on the server (change tag '\(tag)' refers to a deleted record); save it without a change tag to create it again"
                ))
        }
        // The sent fields, unless merged with the stored ones, may have been encoded already.
        let encoded = (fieldsMerged ? nil : encodedFields) ?? FieldCoding.encode(fields)
        let assetIDs: [String]?
        do {
            assetIDs = try AssetRules.attachment(
                record.recordID, fields: fields, encoded: encoded, live: live, owner: owner, modifier: modifier,
                assets: assets)
        } catch {
            return .failed(error)
        }
        if encoded.count > limits.maximumRecordBytes {
            return .failed(
                SyncError(
                    .limitExceeded,
                    "record '\(record.recordID.recordName)' holds \(encoded.count) bytes of fields; the limit is \(limits.maximumRecordBytes) bytes"
                ))
        }
        return .save(
            Save(
                recordType: record.recordType, fields: encoded, existing: live,
                previousRoot: live?.shareRoot ?? existing?.shareRoot,
                shareName: hierarchy.shareName(RecordKey(record.recordID)), placement: placement,
                assetIDs: assetIDs))
    }

    private static func decideDelete(
        _ recordID: RecordValue.ID, liveZones: Set<String>, existing: StoredRecord?,
        hierarchy: RecordHierarchy.Context
    ) -> Decision {
        guard liveZones.contains(recordID.zoneID.zoneName) else {
            return .failed(SyncError(.zoneNotFound, "zone '\(recordID.zoneID.zoneName)' does not exist"))
        }
        if let refusal = RecordHierarchy.refusalToDelete(recordID, existing: existing, context: hierarchy) {
            return .failed(refusal)
        }
        guard let existing, !existing.isDeleted else {
            return .failed(
                SyncError(
                    .unknownItem, "record '\(recordID.recordName)' does not exist on the server; nothing to delete"))
        }
        if existing.recordType == Share.recordType {
            return .failed(
                SyncError(
                    .invalidArguments,
                    "record '\(recordID.recordName)' is a share: delete shares with POST /v1/shares/delete"))
        }
        return .delete(existing)
    }
}

extension ModifyRecordsRequest {
    /// The records the request saves and deletes, by key.
    var recordKeys: [RecordKey] { (saves.map(\.recordID) + deletes).map(RecordKey.init) }
}
