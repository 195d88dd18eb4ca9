import Foundation
import SyncCore

/// What changed, once for every backend: the reads a fetch makes.
extension RecordStoreBackend {
    public func zones(owner: String) async throws -> [StoredZone] {
        try await readStatement { try await $0.liveZones(owner: owner) }
    }

    public func databaseChanges(owner: String, since: ChangeCursor?, limit: Int) async throws -> DatabaseChangePage {
        try await readStatement { try await $0.databaseChanges(owner: owner, since: since, limit: limit) }
    }

    public func zoneChanges(
        owner: String, zoneName: String, since: ChangeCursor?, limit: Int, excludingWriter: String?
    ) async throws -> ZoneChangePage {
        try await readStatement { transaction in
            try await transaction.zoneChanges(
                owner: owner, zoneName: zoneName, since: since, limit: limit, excludingWriter: excludingWriter)
        }
    }

    /// A participant's fetch: the page and the records that joined or left shared hierarchies since,
    /// in one view of the store.
    public func zoneChangesAndMoves(
        owner: String, zoneName: String, since: ChangeCursor, limit: Int, excludingWriter: String?
    ) async throws -> (page: ZoneChangePage, moves: [MembershipChange]) {
        try await read { transaction in
            let page = try await transaction.zoneChanges(
                owner: owner, zoneName: zoneName, since: since, limit: limit, excludingWriter: excludingWriter)
            let moves = try await transaction.membershipChanges(
                owner: owner, zoneName: zoneName, after: since.seq, limit: limit)
            return (page, moves)
        }
    }
}
