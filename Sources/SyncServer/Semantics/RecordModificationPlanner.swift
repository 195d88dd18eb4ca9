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

        /// The response body: saved records with their stored fields spliced in, or with none (`{}`).
        public func responseBody(withSavedFields: Bool = true) throws -> [UInt8] {
            try Self.responseBody(
                saved: saved, failedSaves: failedSaves, deleted: deleted, failedDeletes: failedDeletes
            ) { writer, saved in
                if withSavedFields {
                    saved.row.write(to: &writer, in: saved.recordID.zoneID)
                } else {
                    var row = saved.row
                    row.fields = Data()
                    row.write(to: &writer, in: saved.recordID.zoneID)
                }
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

    private enum Decision {
        /// Save with these fields; `createdAt` and `creator` are nil for a new record.
        case save(recordType: String, fields: Data, createdAt: Int64?, creator: String?)
        case delete(recordType: String)
        case failed(SyncError)

        var isFailure: Bool {
            if case .failed = self { return true }
            return false
        }
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
    public static func plan(
        _ request: ModifyRecordsRequest, owner: String, modifier: String? = nil, writer: String = "",
        liveZones: Set<String>,
        existing: [RecordKey: StoredRecord],
        currentSeq: Int64, now: Int64, limits: ServerLimits, savedFields: [Data]? = nil
    ) throws -> Plan {
        var saveDecisions: [Decision] = []
        for (index, record) in request.saves.enumerated() {
            let encoded = savedFields.flatMap { $0.indices.contains(index) ? $0[index] : nil }
            saveDecisions.append(
                try decideSave(
                    record, policy: request.savePolicy, liveZones: liveZones,
                    existing: existing[RecordKey(record.recordID)], limits: limits, encodedFields: encoded))
        }
        var deleteDecisions: [Decision] = request.deletes.map { recordID in
            decideDelete(recordID, liveZones: liveZones, existing: existing[RecordKey(recordID)])
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

        let modifier = modifier ?? owner
        var seq = currentSeq
        var plan = Plan(
            rows: [], zoneSeqs: [:], endSeq: currentSeq, saved: [], failedSaves: [], deleted: [], failedDeletes: [])
        for (index, decision) in saveDecisions.enumerated() {
            let sent = request.saves[index]
            switch decision {
            case .save(let recordType, let fields, let createdAt, let creator):
                seq += 1
                let row = StoredRecord(
                    key: RecordKey(sent.recordID), recordType: recordType, fields: fields,
                    changeTag: changeTag(seq), createdAt: createdAt ?? now, creator: creator ?? modifier,
                    modifiedAt: now,
                    modifier: modifier, seq: seq, isDeleted: false, writer: writer)
                plan.rows.append(row)
                plan.zoneSeqs[row.key.zoneName] = seq
                plan.saved.append((row, sent.recordID))
            case .failed(let error):
                plan.failedSaves.append(.init(recordID: sent.recordID, error: error))
            case .delete:
                preconditionFailure("a save decided to delete")
            }
        }
        for (index, decision) in deleteDecisions.enumerated() {
            let recordID = request.deletes[index]
            switch decision {
            case .delete(let recordType):
                seq += 1
                let row = StoredRecord(
                    key: RecordKey(recordID), recordType: recordType, fields: Data(), changeTag: changeTag(seq),
                    createdAt: now, creator: modifier, modifiedAt: now, modifier: modifier, seq: seq, isDeleted: true,
                    writer: writer)
                plan.rows.append(row)
                plan.zoneSeqs[row.key.zoneName] = seq
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
        limits: ServerLimits, encodedFields: Data?
    ) throws -> Decision {
        let zoneName = record.recordID.zoneID.zoneName
        guard liveZones.contains(zoneName) else {
            return .failed(
                SyncError(.zoneNotFound, "zone '\(zoneName)' does not exist; save the zone first, then the record"))
        }
        let live = existing.flatMap { $0.isDeleted ? nil : $0 }
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
                    let serverRecord = try live.record(in: record.recordID.zoneID)
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
        if encoded.count > limits.maximumRecordBytes {
            return .failed(
                SyncError(
                    .limitExceeded,
                    "record '\(record.recordID.recordName)' holds \(encoded.count) bytes of fields; the limit is \(limits.maximumRecordBytes) bytes"
                ))
        }
        return .save(recordType: record.recordType, fields: encoded, createdAt: live?.createdAt, creator: live?.creator)
    }

    private static func decideDelete(
        _ recordID: RecordValue.ID, liveZones: Set<String>, existing: StoredRecord?
    ) -> Decision {
        guard liveZones.contains(recordID.zoneID.zoneName) else {
            return .failed(SyncError(.zoneNotFound, "zone '\(recordID.zoneID.zoneName)' does not exist"))
        }
        guard let existing, !existing.isDeleted else {
            return .failed(
                SyncError(
                    .unknownItem, "record '\(recordID.recordName)' does not exist on the server; nothing to delete"))
        }
        return .delete(recordType: existing.recordType)
    }
}
