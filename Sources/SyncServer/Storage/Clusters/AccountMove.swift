import Foundation
import Logging
import PostgresNIO
import SyncCore

/// What ``ClusteredRecordStore/move(username:to:settle:progress:)`` moved.
public struct AccountMoveReport: Sendable {
    public var username: String
    public var from: String
    public var to: String
    /// Rows copied, table by table, in the order copied.
    public var rows: [(table: String, count: Int)]
}

extension ClusteredRecordStore {
    /// Moves the account `username` with everything it owns (records, zones and their history, shares
    /// and their participants, assets and their bytes, encryption settings, sessions) to cluster `target`,
    /// while its devices keep syncing:
    ///
    /// 1. The directory marks it as moving: within ``placementLifetime`` every instance answers its
    ///    requests `serviceUnavailable` with `retryAfter`, which clients retry.
    /// 2. One transaction on the old cluster locks the account's row, which every write of the account
    ///    locks first, and its assets' rows, which uploads lock (so writes under way finish first, and
    ///    later ones wait), copies its rows into one transaction on the new cluster, commits that, and
    ///    deletes the account's row (with its sessions) and its assets on the old one. A write that
    ///    waited there finds no account and runs again where the account is; an upload's chunk that
    ///    waited finds no upload, and the client uploads again.
    /// 3. The directory places it on the new cluster: its requests are answered there.
    /// 4. After `settle` (every instance has read the new placement by then), the rest of the old copy
    ///    is deleted.
    ///
    /// A move that stops half way (the process killed, a cluster unreachable) leaves the account where
    /// it was, still marked as moving: running the move again finishes it. Sessions move with the
    /// account, so its devices need no new sign-in; change tokens hold the account's own change numbers,
    /// which move as they are, so fetches go on where they were.
    public func move(
        username: String, to target: String, settle: Duration = placementLifetime * 3,
        progress: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> AccountMoveReport {
        guard let targetStore = clusters[target] else {
            throw SyncError(
                .invalidArguments,
                "there is no cluster '\(target)'; the clusters are: \(clusterNames.joined(separator: ", "))")
        }
        guard let placement = try await directory.placement(username: username),
            let account = try await existing(username, on: [try store(placement.cluster), targetStore])
        else {
            throw SyncError(.unknownItem, "there is no account named '\(username)'; 'admin accounts list' lists them")
        }
        let owner = account.userRecordName
        if placement.cluster == target && !placement.moving {
            throw SyncError(.invalidArguments, "'\(username)' is on cluster '\(target)' already; nothing to move")
        }
        let source = try store(placement.cluster)
        if !(try await directory.beginMove(userRecordName: owner)) {
            progress("an earlier move of '\(username)' did not finish; finishing it")
        }
        forgetPlacement(of: owner)
        var rows: [(table: String, count: Int)] = []
        do {
            // Only a copy the directory does not point to is a leftover.
            if placement.cluster != target {
                rows = try await copyAccount(owner, from: source, to: targetStore, progress: progress)
            }
        } catch {
            // Back where it was only when the old cluster surely still holds it (its copy did not
            // commit); otherwise it stays marked as moving, and running the move again finishes it.
            if (try? await source.account(userRecordName: owner)) != nil {
                try? await directory.cancelMove(userRecordName: owner)
            }
            forgetPlacement(of: owner)
            throw error
        }
        try await directory.finishMove(userRecordName: owner, to: target)
        forgetPlacement(of: owner)
        progress("'\(username)' is on cluster '\(target)' now; its old copy goes once every instance knows")
        if placement.cluster != target {
            try await Task.sleep(for: settle)
            do {
                try await source.withConnection { connection in
                    for (table, condition) in AccountRows.tables.reversed() {
                        try await connection.query(
                            AccountRows.statement("DELETE FROM \(table) WHERE \(condition)", owner),
                            logger: self.logger)
                    }
                }
            } catch {
                // Nothing reads it (lists keep each account's rows from its own cluster), and a move
                // back to that cluster deletes it first.
                progress(
                    "the old copy on '\(placement.cluster)' could not be deleted (\(error)); it is not read, and a move back there deletes it"
                )
            }
        }
        return AccountMoveReport(username: account.username, from: placement.cluster, to: target, rows: rows)
    }

    /// The account on the first of `stores` that has it (after a move stopped half way, only the
    /// new cluster does).
    private func existing(_ username: String, on stores: [PostgresRecordStore]) async throws -> StoredAccount? {
        for store in stores {
            if let account = try await store.account(username: username) { return account }
        }
        return nil
    }

    /// Copies the rows of `owner` from `source` to `target` under the account's lock on `source`, and
    /// deletes its account row there in the same transaction. Returns what it copied, table by table.
    /// When `source` has no account row any more (an earlier attempt committed), copies nothing.
    private func copyAccount(
        _ owner: String, from source: PostgresRecordStore, to target: PostgresRecordStore,
        progress: @escaping @Sendable (String) -> Void
    ) async throws -> [(table: String, count: Int)] {
        try await source.transaction { sourceConnection in
            let locked = try await sourceConnection.query(
                "SELECT 1 FROM account WHERE user_record_name = \(owner) FOR UPDATE", logger: self.logger
            ).collect()
            guard !locked.isEmpty else {
                // Committed before: the new copy is whole, as its transaction committed first.
                return []
            }
            // Uploads take their asset's row for each chunk, not the account's.
            try await sourceConnection.query(
                AccountRows.statement("SELECT 1 FROM asset WHERE \(AccountRows.assets) FOR UPDATE", owner),
                logger: self.logger)
            let copied = try await target.transaction { targetConnection in
                for (table, condition) in AccountRows.tables.reversed() {
                    try await targetConnection.query(
                        AccountRows.statement("DELETE FROM \(table) WHERE \(condition)", owner), logger: self.logger)
                }
                var copied: [(table: String, count: Int)] = []
                for (table, condition) in AccountRows.tables {
                    let count = try await AccountRows.copy(
                        table: table, condition: condition, key: owner, from: sourceConnection, to: targetConnection,
                        logger: self.logger)
                    progress("copied \(count) rows of \(table)")
                    copied.append((table, count))
                }
                return copied
            }
            // Writes that waited find no account (and uploads no asset) here, and go to the new copy;
            // the rest stays for readers this instance or another still sends here, until `settle`.
            try await sourceConnection.query(
                AccountRows.statement("DELETE FROM asset WHERE \(AccountRows.assets)", owner), logger: self.logger)
            try await sourceConnection.query(
                "DELETE FROM account WHERE user_record_name = \(owner)", logger: self.logger)
            return copied
        }
    }
}

/// The rows an account owns on a cluster, table by table in an order that keeps foreign keys, each
/// with the condition that picks them (`$1`: the account's user record name).
enum AccountRows {
    /// An asset goes with the record that names it, and an upload no record names with its uploader.
    static let assets = "(owner = $1 OR (owner IS NULL AND uploader = $1))"

    static let tables: [(table: String, condition: String)] = [
        ("account", "user_record_name = $1"),
        ("session", "user_record_name = $1"),
        ("ended_session", "user_record_name = $1"),
        ("encryption_settings", "user_record_name = $1"),
        ("zone", "owner = $1"),
        ("record", "owner = $1"),
        ("record_reference", "owner = $1"),
        ("client_request", "owner = $1"),
        ("share", "owner = $1"),
        ("share_participant", "owner = $1"),
        ("share_membership", "owner = $1"),
        ("asset", assets),
        ("asset_chunk", "asset_id IN (SELECT id FROM asset WHERE \(assets))"),
    ]

    /// One asset's rows (`$1`: its ID).
    static let asset: [(table: String, condition: String)] = [
        ("asset", "id = $1"), ("asset_chunk", "asset_id = $1"),
    ]

    /// `sql` (of the tables and conditions above, never of input) with `key` as `$1`.
    static func statement(_ sql: String, _ key: String) -> PostgresQuery {
        var binds = PostgresBindings()
        binds.append(key)
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }

    /// Copies the rows of `table` that `condition` picks from one connection to the other, as JSON
    /// (`row_to_json`, `json_populate_recordset`: every column as it is, in batches of bounded size, read
    /// as a stream). Both databases have the same schema version, so their columns are the same.
    static func copy(
        table: String, condition: String, key: String, from source: PostgresConnection,
        to target: PostgresConnection, logger: Logger
    ) async throws -> Int {
        // The table's row type, named with its schema: `record` alone is PostgreSQL's pseudo-type.
        let schema =
            try await target.query("SELECT current_schema()", logger: logger).collect()
            .first?.decode(String.self) ?? "public"
        let rowType = "\"\(schema.replacingOccurrences(of: "\"", with: "\"\""))\".\"\(table)\""
        var batch: [String] = []
        var batchBytes = 0
        var count = 0
        func flush() async throws {
            guard !batch.isEmpty else { return }
            var binds = PostgresBindings()
            binds.append("[" + batch.joined(separator: ",") + "]")
            try await target.query(
                PostgresQuery(
                    unsafeSQL:
                        "INSERT INTO \(rowType) SELECT * FROM json_populate_recordset(NULL::\(rowType), $1::json)",
                    binds: binds), logger: logger)
            count += batch.count
            batch.removeAll(keepingCapacity: true)
            batchBytes = 0
        }
        let rows = try await source.query(
            statement("SELECT row_to_json(t)::text FROM \(table) t WHERE \(condition)", key), logger: logger)
        for try await json in rows.decode(String.self) {
            batch.append(json)
            batchBytes += json.utf8.count
            if batch.count >= 500 || batchBytes >= 4 << 20 { try await flush() }
        }
        try await flush()
        return count
    }
}
