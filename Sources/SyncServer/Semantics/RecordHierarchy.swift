import Foundation
import SyncCore

/// CloudKit's record hierarchies, as pure rules: a record's `parent` puts it below another record of
/// its zone; a share saved with a record as its root shares that record and every record whose
/// parent chain leads to it. Each stored record keeps the root of the shared hierarchy it is in
/// (``StoredRecord/shareRoot``), so that reads filter by one column; these rules say what that root
/// becomes when a record is saved, and who may do it.
///
/// A record is in at most one share: the root of a share cannot go below another shared record, and
/// a record with a shared root below it cannot join another hierarchy (`alreadyShared`).
public enum RecordHierarchy {
    /// How deep a hierarchy may go: parent chains are walked, and a cycle must end somewhere.
    public static let maximumDepth = 64

    /// A record above a saved one, as the store read it.
    public struct Ancestor: Sendable, Hashable {
        public var recordName: String
        /// The share whose root it is, if it is one.
        public var shareName: String?
        /// The root of the shared hierarchy it is in.
        public var shareRoot: String?

        public init(recordName: String, shareName: String?, shareRoot: String?) {
            self.recordName = recordName
            self.shareName = shareName
            self.shareRoot = shareRoot
        }

        /// The root of the hierarchy a record below it joins.
        var rootBelow: String? { shareName != nil ? recordName : shareRoot }
    }

    /// What a store reads for a modification before the planner decides, about hierarchies.
    public struct Context: Sendable {
        /// For each parent a save names (by its key): the parent and its ancestors, nearest first;
        /// empty when the parent does not exist (a record may name a parent saved later).
        public var chains: [RecordKey: [Ancestor]] = [:]
        /// Saved records with the root of a share somewhere below them.
        public var subtreesWithShares: Set<RecordKey> = []
        /// The share name a saved record is to have, set or cleared by the share routes; other
        /// saves keep the stored one.
        public var shareNames: [RecordKey: String?] = [:]
        /// For a participant, per zone of record-hierarchy shares: the hierarchies they see and may
        /// change. Zones not listed are not restricted (the owner, or a zone-wide share).
        public var access: [String: Access] = [:]

        public init() {}
    }

    /// The hierarchies of a zone a participant sees, and those of them they may change.
    public struct Access: Sendable, Hashable {
        public var readableRoots: Set<String>
        public var writableRoots: Set<String>

        public init(readableRoots: Set<String>, writableRoots: Set<String>) {
            self.readableRoots = readableRoots
            self.writableRoots = writableRoots
        }
    }

    /// A record's shared root changed: the store moves the records below it along, and tells the
    /// shares' participants (``MembershipChange``).
    public struct RootChange: Sendable, Hashable {
        public var key: RecordKey
        public var old: String?
        public var new: String?
        /// Whether the record itself left or joined (a save); false for a deletion, whose tombstone
        /// tells the old hierarchy's participants already.
        public var includesRecord: Bool
    }

    /// The parent's name a save gives its record: nil without a parent.
    static func parentName(of record: RecordValue) -> String? {
        record.parent?.recordID.recordName
    }

    /// Decides the hierarchy side of a save: the record's shared root afterwards, or why it may
    /// not be saved.
    ///
    /// - Parameters:
    ///   - existing: the live stored record, if there is one.
    ///   - shareName: the share whose root the record is to be.
    ///   - plannedRoots: the roots of records saved earlier in the same request.
    static func rootAfterSave(
        _ record: RecordValue, existing: StoredRecord?, shareName: String?, context: Context,
        plannedRoots: [RecordKey: String?]
    ) -> Result<String?, SyncError> {
        let name = record.recordID.recordName
        let key = RecordKey(record.recordID)
        var rootAbove: String?
        if let parent = parentName(of: record) {
            let chain = context.chains[RecordKey(zoneName: key.zoneName, recordName: parent)] ?? []
            if parent == name || chain.contains(where: { $0.recordName == name }) {
                return .failure(
                    SyncError(
                        .invalidArguments,
                        "record '\(name)' cannot have '\(parent)' as its parent: '\(parent)' is below it already; a hierarchy has no cycles"
                    ))
            }
            if chain.count >= maximumDepth {
                return .failure(
                    SyncError(
                        .invalidArguments,
                        "record '\(name)' would be more than \(maximumDepth) levels below its hierarchy's top; choose a parent higher up"
                    ))
            }
            if let planned = plannedRoots[RecordKey(zoneName: key.zoneName, recordName: parent)] {
                rootAbove = planned
            } else {
                rootAbove = chain.first?.rootBelow
            }
        }
        if shareName != nil, let rootAbove {
            return .failure(
                SyncError(
                    .alreadyShared,
                    "record '\(name)' is the root of a share and cannot go below a record of another share (rooted at '\(rootAbove)'); stop sharing one of them first"
                ))
        }
        let root = shareName != nil ? name : rootAbove
        if root != nil, root != existing?.shareRoot, context.subtreesWithShares.contains(key) {
            return .failure(
                SyncError(
                    .alreadyShared,
                    "a record below '\(name)' is the root of another share, and a record is in one share at most; stop sharing it first"
                ))
        }
        if let access = context.access[key.zoneName] {
            let before = existing?.shareRoot
            guard existing == nil || before.map(access.writableRoots.contains) == true,
                root.map(access.writableRoots.contains) == true
            else {
                if let before, access.readableRoots.contains(before) {
                    return .failure(readOnly(name, zoneName: key.zoneName))
                }
                return .failure(notWritable(name, zoneName: key.zoneName))
            }
        }
        return .success(root)
    }

    /// Why a participant may not delete a record; nil when they may.
    static func refusalToDelete(_ recordID: RecordValue.ID, existing: StoredRecord?, context: Context)
        -> SyncError?
    {
        guard let access = context.access[recordID.zoneID.zoneName] else { return nil }
        guard let existing, !existing.isDeleted, let root = existing.shareRoot, access.readableRoots.contains(root)
        else {
            // A record outside their hierarchies answers as one that does not exist.
            return SyncError(
                .unknownItem, "record '\(recordID.recordName)' does not exist on the server; nothing to delete")
        }
        guard access.writableRoots.contains(root) else {
            return readOnly(recordID.recordName, zoneName: recordID.zoneID.zoneName)
        }
        if existing.shareName != nil {
            return SyncError(
                .permissionFailure,
                "record '\(recordID.recordName)' is the root of the share; only its owner deletes it, and to leave the share delete the share from your shared database"
            )
        }
        return nil
    }

    static func readOnly(_ recordName: String, zoneName: String) -> SyncError {
        SyncError(
            .permissionFailure,
            "record '\(recordName)' of zone '\(zoneName)' is shared with you read-only; ask its owner for read-write access to change it"
        )
    }

    /// A participant's save outside the hierarchies they may change. The same for a record that
    /// exists elsewhere in the zone and one that does not, so that they learn nothing of the rest.
    static func notWritable(_ recordName: String, zoneName: String) -> SyncError {
        SyncError(
            .permissionFailure,
            "record '\(recordName)' is not in a record hierarchy of zone '\(zoneName)' shared with you read-write; a record you save must have a parent in one"
        )
    }
}

/// A record that joined or left a shared hierarchy without being saved itself (a record above it
/// moved, or a share was saved or deleted), or a saved record that left one: at `seq` in its
/// owner's history, so that a participant's fetch brings it (joined) or deletes it (left).
public struct MembershipChange: Sendable, Hashable {
    public var recordName: String
    public var recordType: String
    public var oldRoot: String?
    public var newRoot: String?
    public var seq: Int64

    public init(recordName: String, recordType: String, oldRoot: String?, newRoot: String?, seq: Int64) {
        self.recordName = recordName
        self.recordType = recordType
        self.oldRoot = oldRoot
        self.newRoot = newRoot
        self.seq = seq
    }
}
