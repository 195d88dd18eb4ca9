import Foundation
import SyncCore

/// Compacting history, once for every backend.
extension RecordStoreBackend {
    public func compactHistory(tombstonesBefore: Date, requestsBefore: Date) async throws -> Int {
        // Records deleted zones left (a purge cut short) go before their zones' tombstones can.
        try await purgeDeletedZones(owner: nil, zoneNames: nil)
        let cutoff = tombstonesBefore.millisecondsSince1970
        return try await write { transaction in
            // Tokens from before what is removed expire with it; membership moves are history as
            // tombstones are.
            try await transaction.raiseCompactedSeqs(before: cutoff)
            try await transaction.deleteMembershipChanges(before: cutoff)
            let removed = try await transaction.deleteTombstones(before: cutoff)
            try await transaction.deleteRequestAnswers(before: requestsBefore.millisecondsSince1970)
            return removed
        }
    }
}
