import Foundation
import PostgresNIO
import SyncCore

/// A participant's uploads saved into a shared zone on another cluster: an asset lives with the record
/// that names it, so it moves to the zone's cluster with the save, and from then on counts in the
/// storage of the zone's owner (as the participant's records there do), not in the participant's.
extension ClusteredRecordStore {
    /// Before a save by `modifier` into a zone on `target`: moves there the uploads it names that
    /// `modifier` made on its own cluster (and no record names yet), their size no longer counted in its
    /// storage. Returns the assets the save names when `modifier` lives on another cluster (those
    /// ``adoptUploads(_:of:owner:on:)`` takes after the save), and none otherwise.
    func carryUploads(of modifier: String, namedBy request: ModifyRecordsRequest, to target: PostgresRecordStore)
        async throws -> [String]
    {
        guard clusterNames.count > 1 else { return [] }
        let ids = AssetRules.namedAssetIDs(request)
        guard !ids.isEmpty else { return [] }
        let homeName = try await clusterName(of: modifier)
        let home = try store(homeName)
        guard home !== target else { return [] }
        let targetName = clusterNames.first { clusters[$0] === target }!
        for id in ids where try await target.asset(id: id) == nil {
            guard let asset = try await home.asset(id: id), asset.uploader == modifier, asset.record == nil else {
                continue
            }
            try await home.transaction { homeConnection in
                try await target.transaction { targetConnection in
                    for (table, condition) in AccountRows.asset {
                        _ = try await AccountRows.copy(
                            table: table, condition: condition, key: id, from: homeConnection, to: targetConnection,
                            logger: self.logger)
                    }
                }
                try await homeConnection.query("DELETE FROM asset WHERE id = \(id)", logger: self.logger)
                try await homeConnection.query(
                    "UPDATE account SET used_bytes = used_bytes - \(asset.size) WHERE user_record_name = \(modifier)",
                    logger: self.logger)
            }
            remember(id, on: targetName)
        }
        return ids
    }

    /// After that save: the assets of `ids` that `modifier` uploaded and a record of `owner` now names
    /// become the owner's, counted in its storage (and freed from it when collected), in one transaction.
    /// A save refused, or retried after an asset was taken, leaves nothing to take or takes it then.
    func adoptUploads(_ ids: [String], of modifier: String, owner: String, on target: PostgresRecordStore)
        async throws
    {
        guard !ids.isEmpty else { return }
        try await target.transaction { connection in
            let sizes = try await connection.query(
                """
                UPDATE asset SET uploader = \(owner)
                WHERE id = ANY(\(ids)) AND uploader = \(modifier) AND owner = \(owner)
                RETURNING size
                """, logger: self.logger
            ).collect().map { try $0.decode(Int64.self) }
            guard !sizes.isEmpty else { return }
            try await connection.query(
                "UPDATE account SET used_bytes = used_bytes + \(sizes.reduce(0, +)) WHERE user_record_name = \(owner)",
                logger: self.logger)
        }
    }
}
