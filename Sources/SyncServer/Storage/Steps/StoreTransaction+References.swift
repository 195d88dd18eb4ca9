import Foundation
import SyncCore

/// Reference actions, once for every backend (``ReferenceActions``): the deletions a plan's deletions
/// take along, and the index of deleteSelf references they are found by.
extension StoreTransaction {
    /// Adds to `plan` the deletion of every record that deleteSelf references make go with the ones it
    /// deletes, level by level until a level finds none (each record goes once, so a cycle ends). A
    /// record the plan saves counts with its saved fields; any other, with its stored ones, found in
    /// the index. A plan that deletes nothing reads nothing.
    func cascadeDeletions(
        in plan: inout RecordModificationPlanner.Plan, owner: String, modifier: String, writer: String, now: Int64
    ) async throws {
        var deleted = plan.deletedKeys
        while !deleted.isEmpty {
            var taken = try plan.savedReferrers(of: Set(deleted), owner: owner)
            // Rows the plan writes are judged by what it writes: a saved record by its new fields, a
            // deleted one is gone already.
            let written = Set(plan.rows.map(\.key))
            for (zoneName, targets) in Dictionary(grouping: deleted, by: \.zoneName).sorted(by: { $0.key < $1.key }) {
                let keys = try await referrers(owner: owner, zoneName: zoneName, of: targets.map(\.recordName))
                    .map { RecordKey(zoneName: zoneName, recordName: $0) }.filter { !written.contains($0) }
                guard !keys.isEmpty else { continue }
                taken += try await storedRecords(owner: owner, keys: keys).values.filter { !$0.isDeleted }
            }
            deleted = plan.cascade(deleting: taken, modifier: modifier, writer: writer, now: now)
        }
    }

    /// Brings the index up to date with record rows about to be written: the entries of the records
    /// whose stored version may hold deleteSelf references go (those of `storedReferrers`, and those
    /// `storedBytes` does not name, which may hold anything), and each live row's go in. Rows without
    /// such references, of records known to have had none, cost no statement.
    func indexReferences(
        of rows: [StoredRecord], owner: String, storedBytes: [RecordKey: Int64], storedReferrers: Set<RecordKey>
    ) async throws {
        let cleared = rows.map(\.key).filter { storedBytes[$0] == nil || storedReferrers.contains($0) }
        if !cleared.isEmpty { try await deleteReferences(owner: owner, from: cleared) }
        let entries = try rows.flatMap { try ReferenceActions.entries(of: $0, owner: owner) }
        if !entries.isEmpty { try await insertReferences(entries, owner: owner) }
    }

    /// Fills the index from the live records an earlier schema stored (schema version 10): only fields
    /// that hold the marker of a deleteSelf reference are read and decoded.
    func indexStoredReferences() async throws {
        let rows = try await liveRecords(containing: ReferenceActions.marker)
        for (owner, ownRows) in Dictionary(grouping: rows, by: \.owner).sorted(by: { $0.key < $1.key }) {
            let entries = try ownRows.flatMap { try ReferenceActions.entries(of: $0.row, owner: owner) }
            if !entries.isEmpty { try await insertReferences(entries, owner: owner) }
        }
    }
}
