import Foundation
import SyncCore

/// What a participant of record-hierarchy shares sees of a zone's changes: the changes of the
/// records in their hierarchies, the records that joined them, and deletions for the records that
/// were deleted or left them. Nothing of the rest of the zone, not even its records' names.
struct SharedHierarchyView {
    /// The roots of the hierarchies the participant sees.
    var visibleRoots: Set<String>
    /// The roots of hierarchies they saw at their last fetch and no longer do: what happens in them
    /// reaches the participant only as deletions.
    var formerRoots: Set<String> = []

    /// What a page of the zone's history means to the participant, each record once, as its last
    /// change in the page says.
    struct Changes {
        /// Records changed in a visible hierarchy, in change order.
        var modified: [StoredRecord] = []
        /// Records deleted in, or gone from, a visible hierarchy.
        var deleted: [(recordName: String, recordType: String)] = []
        /// Records that joined a visible hierarchy without changing: their current rows are read next.
        var joined: [String] = []
    }

    private enum Event {
        case modified(StoredRecord)
        case deleted(recordType: String)
        case joined
    }

    /// The changes of `rows` (the zone's record rows) and `moves` (its membership log), which cover
    /// the same stretch of the owner's history.
    func changes(rows: [StoredRecord], moves: [MembershipChange]) -> Changes {
        var events: [(seq: Int64, name: String, event: Event)] = []
        func seen(_ root: String?) -> Bool {
            root.map { visibleRoots.contains($0) || formerRoots.contains($0) } == true
        }
        for row in rows where seen(row.shareRoot) {
            let visible = !row.isDeleted && shows(row)
            events.append(
                (row.seq, row.key.recordName, visible ? .modified(row) : .deleted(recordType: row.recordType)))
        }
        for move in moves {
            if let root = move.newRoot, visibleRoots.contains(root) {
                events.append((move.seq, move.recordName, .joined))
            } else if seen(move.oldRoot) {
                events.append((move.seq, move.recordName, .deleted(recordType: move.recordType)))
            }
        }
        events.sort { $0.seq < $1.seq }
        var last: [String: Int] = [:]
        for (index, entry) in events.enumerated() { last[entry.name] = index }
        var changes = Changes()
        for (index, entry) in events.enumerated() where last[entry.name] == index {
            switch entry.event {
            case .modified(let row): changes.modified.append(row)
            case .deleted(let type): changes.deleted.append((entry.name, type))
            case .joined: changes.joined.append(entry.name)
            }
        }
        return changes
    }

    /// Whether a record is one the participant sees.
    func shows(_ record: StoredRecord) -> Bool {
        record.shareRoot.map(visibleRoots.contains) == true
    }
}
