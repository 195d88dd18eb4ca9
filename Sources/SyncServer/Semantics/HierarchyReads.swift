import Foundation
import SyncCore

/// The decisions around a modification's hierarchy reads and writes, made once for both storage
/// backends: what a store must read before the planner decides (``Lookup``), and how the records below a
/// record whose shared root changed move and are logged (``MoveLog``). Each backend keeps only its reads
/// and writes.
extension RecordHierarchy {
    /// What a store reads about the hierarchies a modification touches, question by question: the chain
    /// above each parent the saves name (unless an earlier chain held it), whether a share's root lies
    /// below a saved record that may join a hierarchy, and, for a participant, which saves would take
    /// records along. The answers build the planner's ``Context``.
    struct Lookup {
        private(set) var context: Context
        /// Saved records that may join a hierarchy: the store says which have a share's root below them
        /// (``addShareBelow(_:)``).
        let shareBelowQuestions: [RecordKey]
        /// A participant's saves: the store says which name no live record while live records name
        /// them as their parent (``addAdoption(_:)``).
        let adoptionQuestions: [RecordKey]
        private var chainStarts: [RecordKey]

        init(request: ModifyRecordsRequest, base: Context) {
            context = base
            var starts: [RecordKey] = []
            var shareBelow: [RecordKey] = []
            var adoptions: [RecordKey] = []
            for record in request.saves {
                let zoneName = record.recordID.zoneID.zoneName
                let key = RecordKey(record.recordID)
                if let parent = record.parent?.recordID.recordName {
                    starts.append(RecordKey(zoneName: zoneName, recordName: parent))
                }
                // Only a record that may join a hierarchy needs the look below it.
                if record.parent != nil || base.shareNames[key] != nil { shareBelow.append(key) }
                if base.access[zoneName] != nil { adoptions.append(key) }
            }
            chainStarts = starts.reversed()
            shareBelowQuestions = shareBelow
            adoptionQuestions = adoptions
        }

        /// The next parent whose chain the store reads (the live record and those above it, nearest
        /// first, each with its stored parent); nil once every parent is known.
        mutating func nextChainStart() -> RecordKey? {
            while let start = chainStarts.popLast() {
                if context.nodes[start] == nil { return start }
            }
            return nil
        }

        /// The chain the store read from `start`: names and nodes, nearest first.
        mutating func addChain(_ chain: [(name: String, node: Node)], from start: RecordKey) {
            for (name, node) in chain {
                context.nodes[RecordKey(zoneName: start.zoneName, recordName: name)] = node
            }
        }

        mutating func addShareBelow(_ key: RecordKey) { context.subtreesWithShares.insert(key) }

        mutating func addAdoption(_ key: RecordKey) { context.adoptions.insert(key) }
    }

    /// A live record below a record whose shared root changed, as the store reads it.
    struct Descendant: Sendable, Hashable {
        var name: String
        var type: String
        var root: String?
    }

    /// The moves a plan's root changes make, in the order the store applies them: for each change, the
    /// records below it that move to its new root, and the log entries (``MembershipChange``) that tell
    /// the participants, numbered at the owner's next change numbers.
    struct MoveLog {
        /// The last change number used.
        private(set) var seq: Int64
        /// The zones whose history the moves extended.
        private(set) var zones: Set<String> = []

        init(after seq: Int64) { self.seq = seq }

        /// One change's moves: the names whose shared root the store sets to `change.new`, and the
        /// entries it logs. `ownType` is the record's type when ``RootChange/logsOwnMove`` (the
        /// record's own row says where it is now; the log tells its old hierarchy it left);
        /// `descendants` are the live records below it, down to (not into) other shares' roots, read
        /// after the earlier changes' moves were written.
        mutating func add(_ change: RootChange, ownType: String?, descendants: [Descendant]) -> (
            moved: [String], entries: [MembershipChange]
        ) {
            var entries: [(name: String, type: String, old: String?)] = []
            if change.logsOwnMove, let ownType { entries.append((change.key.recordName, ownType, change.old)) }
            // In byte order of their names, so that both backends log the moves in one order.
            let moving = descendants.filter { $0.root != change.new }
                .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            entries += moving.map { ($0.name, $0.type, $0.root) }
            let log = entries.map { entry in
                seq += 1
                return MembershipChange(
                    recordName: entry.name, recordType: entry.type, oldRoot: entry.old, newRoot: change.new, seq: seq)
            }
            if !log.isEmpty { zones.insert(change.key.zoneName) }
            return (moving.map(\.name), log)
        }
    }
}

extension RecordHierarchy.RootChange {
    /// Whether the record's own move is logged: a saved record that left a shared hierarchy.
    var logsOwnMove: Bool { includesRecord && old != nil }
}

extension RecordModificationPlanner.Plan {
    /// The change number each zone the plan touched ends at, once `moves` are written: a zone whose
    /// history the moves extended ends at their last number.
    func zoneSeqs(after moves: RecordHierarchy.MoveLog) -> [String: Int64] {
        var seqs = zoneSeqs
        for zoneName in moves.zones { seqs[zoneName] = moves.seq }
        return seqs
    }
}
