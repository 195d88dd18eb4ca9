import Foundation
import SyncCore

/// Record hierarchies around a modification, once for every backend: what the planner asks before
/// (``RecordHierarchy/Lookup``), and the moves it makes after (``RecordHierarchy/MoveLog``).
extension StoreTransaction {
    /// The planner's context for `request`: the store's answers to what ``RecordHierarchy/Lookup`` asks.
    func hierarchyContext(owner: String, request: ModifyRecordsRequest, base: RecordHierarchy.Context) async throws
        -> RecordHierarchy.Context
    {
        var lookup = RecordHierarchy.Lookup(request: request, base: base)
        while let start = lookup.nextChainStart() {
            lookup.addChain(try await chain(owner: owner, from: start), from: start)
        }
        for key in lookup.shareBelowQuestions where try await hasShareBelow(owner: owner, key) {
            lookup.addShareBelow(key)
        }
        for key in lookup.adoptionQuestions where try await adopts(owner: owner, key) {
            lookup.addAdoption(key)
        }
        return lookup.context
    }

    /// Writes the moves of a plan's root changes, logged at the owner's change numbers after `seq`.
    func moveDescendants(of changes: [RecordHierarchy.RootChange], owner: String, seq: Int64, now: Date)
        async throws -> RecordHierarchy.MoveLog
    {
        var moves = RecordHierarchy.MoveLog(after: seq)
        for change in changes {
            let zoneName = change.key.zoneName
            let ownType = change.logsOwnMove ? try await recordType(owner: owner, change.key) : nil
            let (moved, entries) = moves.add(
                change, ownType: ownType, descendants: try await descendants(owner: owner, of: change.key))
            if !moved.isEmpty {
                try await setShareRoot(change.new, owner: owner, zoneName: zoneName, recordNames: moved)
            }
            if !entries.isEmpty {
                try await logMembershipChanges(
                    entries, owner: owner, zoneName: zoneName, at: now.millisecondsSince1970)
            }
        }
        return moves
    }
}
