import Foundation
import SyncCore

/// CloudKit's record hierarchies, as pure rules: a record's `parent` puts it below another record of
/// its zone; a share saved with a record as its root shares that record and every record whose
/// parent chain leads to it. Each stored record keeps the root of the shared hierarchy it is in
/// (``StoredRecord/shareRoot``), so that reads filter by one column; these rules say what that root
/// becomes when a record is saved, and who may do it.
///
/// Chains are walked as the request leaves them (a record saved in the same request counts with its
/// new parent), so no request makes a cycle, whatever the order of its saves. A record is in at most
/// one share: the root of a share cannot go below another shared record, and a record with a
/// shared root below it cannot join another hierarchy (`alreadyShared`).
///
/// A participant of record-hierarchy shares learns nothing of the rest of the zone from a refusal:
/// whatever their save would touch outside their hierarchies is refused with one answer
/// (``notWritable(_:zoneName:)``) before any other check can say more.
public enum RecordHierarchy {
    /// How deep a hierarchy may go: parent chains are walked, and a cycle must end somewhere.
    public static let maximumDepth = 64

    /// A stored live record on a parent chain the request names.
    public struct Node: Sendable, Hashable {
        public var recordType: String
        /// Its stored parent: the next record up, which may not exist.
        public var parentName: String?
        /// The share whose root it is, if it is one.
        public var shareName: String?
        /// The root of the shared hierarchy it is in.
        public var shareRoot: String?

        public init(recordType: String, parentName: String?, shareName: String?, shareRoot: String?) {
            self.recordType = recordType
            self.parentName = parentName
            self.shareName = shareName
            self.shareRoot = shareRoot
        }
    }

    /// What a store reads for a modification before the planner decides, about hierarchies.
    public struct Context: Sendable {
        /// The stored live records on the chains above the parents that saves name, by key: each
        /// parent and the records above it, up to a record that does not exist.
        public var nodes: [RecordKey: Node] = [:]
        /// Saved records with the root of a share somewhere below them.
        public var subtreesWithShares: Set<RecordKey> = []
        /// Saves of records that do not exist (or were deleted) while live records name them as
        /// their parent: saving one takes those records along (read for participants only).
        public var adoptions: Set<RecordKey> = []
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

        func sees(_ record: StoredRecord?) -> Bool {
            record?.shareRoot.map(readableRoots.contains) == true
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

    /// The hierarchy side of a planned save.
    struct Placement {
        /// The parent the record is stored with (a participant's save keeps a root's parent).
        var parentName: String?
        var shareRoot: String?
    }

    /// The whole request, for walking chains as it leaves them.
    struct Request {
        var saves: [RecordKey: RecordValue]
        var deletes: Set<RecordKey>
        var existing: [RecordKey: StoredRecord]
        var context: Context

        init(_ request: ModifyRecordsRequest, existing: [RecordKey: StoredRecord], context: Context) {
            var saves: [RecordKey: RecordValue] = [:]
            saves.reserveCapacity(request.saves.count)
            for record in request.saves { saves[RecordKey(record.recordID)] = record }
            self.saves = saves
            deletes = Set(request.deletes.map(RecordKey.init))
            self.existing = existing
            self.context = context
        }

        func live(_ key: RecordKey) -> StoredRecord? {
            existing[key].flatMap { $0.isDeleted ? nil : $0 }
        }

        /// The share name a record has once the request is applied.
        func shareName(_ key: RecordKey) -> String? {
            if let name = context.shareNames[key] { return name }
            return live(key)?.shareName ?? context.nodes[key]?.shareName
        }

        /// The parent a saved record is stored with: a participant cannot move a share's root.
        func storedParent(of record: RecordValue) -> String? {
            let key = RecordKey(record.recordID)
            if context.access[key.zoneName] != nil, let live = live(key), live.shareName != nil {
                return live.parentName
            }
            return record.parent?.recordID.recordName
        }
    }

    private enum Walk {
        case root(String?)
        case refused(SyncError)
        /// The chain loops through other saves of the request, which fail themselves: walk again without them.
        case undecided
    }

    /// What the rules decide of a save.
    enum Outcome {
        case placed(Placement)
        case refused(SyncError)
        /// Its chain loops through other saves of the request: decided once they are.
        case undecided
    }

    /// The root of the hierarchy the record `name` joins below `parent`, walking up as the request
    /// leaves the chain; refused for a cycle, a chain too deep, or a share as the parent.
    private static func root(below parent: String, of name: String, zoneName: String, in request: Request) -> Walk {
        var node = parent
        var visited = Set<String>()
        for depth in 0... {
            guard visited.insert(node).inserted else { return .undecided }
            if node == name {
                return .refused(
                    SyncError(
                        .invalidArguments,
                        "record '\(name)' cannot have '\(parent)' as its parent: '\(parent)' is below it; a hierarchy has no cycles"
                    ))
            }
            if depth >= maximumDepth {
                return .refused(
                    SyncError(
                        .invalidArguments,
                        "record '\(name)' would be more than \(maximumDepth) levels below its hierarchy's top; choose a parent higher up"
                    ))
            }
            let key = RecordKey(zoneName: zoneName, recordName: node)
            let type: String
            let next: String?
            if let saved = request.saves[key] {
                type = saved.recordType
                next = request.storedParent(of: saved)
            } else if let stored = request.context.nodes[key], !request.deletes.contains(key) {
                type = stored.recordType
                next = stored.parentName
            } else {
                // Not there: the chain ends (the record may be saved later, and the ones below it join then).
                return .root(nil)
            }
            if depth == 0, type == Share.recordType {
                return .refused(
                    SyncError(.invalidArguments, "record '\(name)' cannot have a share ('\(parent)') as its parent"))
            }
            if request.shareName(key) != nil { return .root(node) }
            guard let next else { return .root(nil) }
            node = next
        }
        return .root(nil)
    }

    /// Decides the hierarchy side of a save: where the record goes, why it may not, or that it waits for others.
    static func placement(of record: RecordValue, in request: Request) -> Outcome {
        let key = RecordKey(record.recordID)
        let name = key.recordName
        let live = request.live(key)
        let access = request.context.access[key.zoneName]
        if let access {
            // Nothing below may speak of what they do not see.
            if live != nil, !access.sees(live) { return .refused(notWritable(name, zoneName: key.zoneName)) }
            if live == nil, request.context.adoptions.contains(key) {
                return .refused(notWritable(name, zoneName: key.zoneName))
            }
        }
        let shareName = request.shareName(key)
        let parentName = request.storedParent(of: record)
        var rootAbove: String?
        if let parentName {
            switch root(below: parentName, of: name, zoneName: key.zoneName, in: request) {
            case .root(let found): rootAbove = found
            case .refused(let error):
                return .refused(access == nil ? error : notWritable(name, zoneName: key.zoneName))
            case .undecided:
                return .undecided
            }
        }
        let root = shareName != nil ? name : rootAbove
        if let access, root.map(access.writableRoots.contains) != true {
            if access.sees(live) { return .refused(readOnly(name, zoneName: key.zoneName)) }
            return .refused(notWritable(name, zoneName: key.zoneName))
        }
        if shareName != nil, let rootAbove {
            return .refused(
                SyncError(
                    .alreadyShared,
                    "record '\(name)' is the root of a share and cannot go below a record of another share (rooted at '\(rootAbove)'); stop sharing one of them first"
                ))
        }
        if root != nil, root != live?.shareRoot, request.context.subtreesWithShares.contains(key) {
            return .refused(
                SyncError(
                    .alreadyShared,
                    "a record below '\(name)' is the root of another share, and a record is in one share at most; stop sharing it first"
                ))
        }
        return .placed(Placement(parentName: parentName, shareRoot: root))
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

    /// A record as a participant of record-hierarchy shares sees it: a root without its parent,
    /// which is outside the hierarchy.
    static func seenByParticipant(_ row: StoredRecord) -> StoredRecord {
        guard row.shareName != nil else { return row }
        var row = row
        row.parentName = nil
        return row
    }

    static func readOnly(_ recordName: String, zoneName: String) -> SyncError {
        SyncError(
            .permissionFailure,
            "record '\(recordName)' of zone '\(zoneName)' is shared with you read-only; ask its owner for read-write access to change it"
        )
    }

    /// A participant's save that would reach outside the hierarchies they may change: a record
    /// they do not see, a parent chain that does not lead to one of their roots, records it would
    /// take along. One answer for all, so that they learn nothing of the rest of the zone.
    static func notWritable(_ recordName: String, zoneName: String) -> SyncError {
        SyncError(
            .permissionFailure,
            "record '\(recordName)' cannot be saved in a record hierarchy of zone '\(zoneName)' shared with you read-write; a record you save must have a parent in one, and must not be another's parent"
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
