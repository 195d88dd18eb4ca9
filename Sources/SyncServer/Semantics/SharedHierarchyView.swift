import Foundation
import SyncCore

/// What a participant of record-hierarchy shares sees of a zone's changes since their last fetch:
/// the changes of the records in their hierarchies, the records that joined them, and deletions for
/// the records that were deleted or left them since (which they could have seen then).
struct SharedHierarchyView {
    /// The roots of the hierarchies the participant sees.
    var visibleRoots: Set<String>

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
    /// the same stretch of the owner's history. Nothing up to `quietThrough` is a deletion: those
    /// pages of a first fetch build what the participant has from what is there now.
    func changes(rows: [StoredRecord], moves: [MembershipChange], quietThrough: Int64 = 0) -> Changes {
        var events: [(seq: Int64, name: String, event: Event)] = []
        func seen(_ root: String?) -> Bool { root.map(visibleRoots.contains) == true }
        for row in rows where seen(row.shareRoot) {
            if !row.isDeleted {
                events.append((row.seq, row.key.recordName, .modified(row)))
            } else if row.seq > quietThrough {
                events.append((row.seq, row.key.recordName, .deleted(recordType: row.recordType)))
            }
        }
        for move in moves {
            if seen(move.newRoot) {
                events.append((move.seq, move.recordName, .joined))
            } else if seen(move.oldRoot), move.seq > quietThrough {
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
