import Foundation
import SyncCore

/// Reference actions, once for every backend (``ReferenceActions``): the index of deleteSelf
/// references.
extension StoreTransaction {
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
