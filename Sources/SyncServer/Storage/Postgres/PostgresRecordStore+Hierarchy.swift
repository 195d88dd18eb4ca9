import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Record hierarchies in PostgreSQL: participants' fetches, which read the log of membership changes
/// beside the records (the writes are the shared steps', `StoreTransaction+Hierarchy.swift`, in
/// `PostgresTransaction+Hierarchy.swift`'s SQL).
extension PostgresRecordStore {
    // MARK: Reading for participants

    public func zoneChangesAndMoves(
        owner: String, zoneName: String, since: ChangeCursor, limit: Int, excludingWriter: String?
    ) async throws -> (page: ZoneChangePage, moves: [MembershipChange]) {
        try await snapshot { connection in
            let page = try await Self.zoneChanges(
                connection, owner: owner, zoneName: zoneName, since: since, limit: limit,
                excludingWriter: excludingWriter, logger: self.logger)
            var moves: [MembershipChange] = []
            for try await (seq, name, type, old, new) in try await connection.query(
                """
                SELECT seq, record_name, record_type, old_root, new_root FROM share_membership
                WHERE owner = \(owner) AND zone_name = \(zoneName) AND seq > \(since.seq) ORDER BY seq LIMIT \(limit + 1)
                """, logger: self.logger
            ).decode((Int64, String, String, String?, String?).self) {
                moves.append(MembershipChange(recordName: name, recordType: type, oldRoot: old, newRoot: new, seq: seq))
            }
            return (page, moves)
        }
    }
}
