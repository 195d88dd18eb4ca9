import Foundation
import SyncCore

/// CloudKit's reference actions, as pure rules: when a record is deleted, every record of its zone
/// that holds a reference to it with the action `deleteSelf` is deleted too, and so on down the chain
/// (A ← B ← C: deleting A deletes B and C), in the same change. The records taken along are deleted
/// as any deleted record is: a tombstone each, which a fetch of the zone's changes reports; their bytes
/// leave the owner's usage; a record of a shared hierarchy leaves it, and a share's root takes its
/// share along (``RecordModificationPlanner/Plan/delete(_:seq:modifier:writer:now:)``).
///
/// - Only a reference to a record of the referring record's own zone counts: CloudKit's references
///   cannot cross zones. The server stores one that names another zone (or another owner's zone of
///   the same name), and never deletes anything through it.
/// - A list of references counts as each of its elements: a record goes when any one of its
///   deleteSelf references names a deleted record.
/// - A reference sealed in an encrypted value is ciphertext to the server, and counts for nothing.
/// - A record saved in the same request as the deletion of a record it references with `deleteSelf`
///   is saved, then deleted (as CloudKit does): the answer lists it as saved, and the zone's changes
///   report its deletion. One saved without that reference any more stays.
/// - The deletions are the zone owner's, like every other change to the zone's data: a participant who
///   may delete a record of a shared hierarchy deletes what references it too, wherever that is in
///   the zone and whatever the participant may see or write of it (as in CloudKit, where the records'
///   owner's zone does it). The deletions the participant asked for are checked as always.
///
/// The stores keep an index of these references (`record_reference`: for each live record, the
/// records its deleteSelf references name), written with the record rows, so that finding what a
/// deletion takes along is a lookup, and a save of fields without such a reference costs one scan of
/// their bytes and no statement.
enum ReferenceActions {
    /// One entry of the index: the live record `recordName` of `zoneName` holds a `deleteSelf`
    /// reference to the record `targetName` of the same zone.
    struct Entry: Sendable, Hashable {
        var zoneName: String
        var recordName: String
        var targetName: String
    }

    /// How a deleteSelf reference's action is written in stored fields (``FieldCoding``): a string
    /// holding this text has its quotes escaped, so fields without it hold no such reference.
    static let marker = Array(#""action":"deleteSelf""#.utf8)

    /// Whether stored fields may hold a deleteSelf reference; false says for sure that they hold none.
    /// Cheap: every saved record is asked.
    static func mayHoldDeleteSelf(_ fields: Data) -> Bool {
        FieldCoding.contains(fields, marker)
    }

    /// The index entries of a record row: none for a tombstone; for a live record, one per record of
    /// its zone that its deleteSelf references name (itself left out: it goes anyway), by name.
    /// - Parameter owner: the zone's owner, whose name a reference's zone ID may carry.
    static func entries(of row: StoredRecord, owner: String) throws -> [Entry] {
        guard !row.isDeleted, mayHoldDeleteSelf(row.fields) else { return [] }
        let fields = try FieldCoding.decode(row.fields)
        return targets(of: fields, in: row.key.zoneName, owner: owner).subtracting([row.key.recordName]).sorted()
            .map { Entry(zoneName: row.key.zoneName, recordName: row.key.recordName, targetName: $0) }
    }

    /// The names of the records of zone `zoneName` (of `owner`) that `fields` reference with `deleteSelf`,
    /// alone or in a list.
    static func targets(of fields: [String: FieldValue], in zoneName: String, owner: String) -> Set<String> {
        var names = Set<String>()
        func add(_ value: FieldValue) {
            switch value {
            case .reference(let reference):
                let zoneID = reference.recordID.zoneID
                guard reference.action == .deleteSelf, zoneID.zoneName == zoneName,
                    zoneID.ownerName == RecordZone.ID.defaultOwnerName || zoneID.ownerName == owner
                else { return }
                names.insert(reference.recordID.recordName)
            case .list(let elements):
                for element in elements { add(element) }
            default:
                break
            }
        }
        for value in fields.values { add(value) }
        return names
    }
}

extension RecordModificationPlanner.Plan {
    /// The tombstones the plan writes, by key: deleted records and shares.
    var deletedKeys: [RecordKey] {
        rows.filter(\.isDeleted).map(\.key)
    }

    /// The records the plan saves that reference one of `targets` with `deleteSelf`, as saved.
    /// - Parameter owner: the zones' owner.
    func savedReferrers(of targets: Set<RecordKey>, owner: String) throws -> [StoredRecord] {
        try rows.filter { row in
            try ReferenceActions.entries(of: row, owner: owner).contains {
                targets.contains(RecordKey(zoneName: $0.zoneName, recordName: $0.targetName))
            }
        }
    }

    /// Deletes `records`, which deleteSelf references take along, after the plan's other changes: each
    /// as any deletion (``delete(_:seq:modifier:writer:now:)``), in key order. A record the plan saves
    /// is saved, then deleted: its tombstone replaces the saved row (the answer still lists the save).
    /// The others are live stored rows, which the plan learns the size of, for usage, and that they
    /// hold references, for the index.
    /// - Returns: the keys deleted, for the next level of the cascade.
    mutating func cascade(deleting records: [StoredRecord], modifier: String, writer: String, now: Int64)
        -> [RecordKey]
    {
        var byKey: [RecordKey: StoredRecord] = [:]
        for record in records { byKey[record.key] = record }
        let saved = Set(rows.lazy.filter { !$0.isDeleted && byKey[$0.key] != nil }.map(\.key))
        if !saved.isEmpty { rows.removeAll { !$0.isDeleted && saved.contains($0.key) } }
        var seq = endSeq
        let ordered = byKey.values.sorted {
            ($0.key.zoneName, $0.key.recordName) < ($1.key.zoneName, $1.key.recordName)
        }
        for record in ordered {
            if !saved.contains(record.key) {
                storedBytes[record.key] = Int64(record.fields.count)
                storedReferrers.insert(record.key)
            }
            delete(record, seq: &seq, modifier: modifier, writer: writer, now: now)
        }
        endSeq = seq
        return ordered.map(\.key)
    }
}
