import Foundation
import Logging
import PostgresNIO
import SyncCore

/// Which cluster holds each account, kept in the main cluster's database (`account_placement`) and
/// shared by every instance: the one table every request's routing reads (through
/// ``ClusteredRecordStore``'s short-lived cache).
///
/// A row holds the account's user record name, its username folded as the stores fold it (so that a
/// username is taken once over every cluster), its cluster, and whether it is being moved (its
/// requests are then told to come back; see ``AccountMove``).
struct AccountDirectory: Sendable {
    /// Where an account lives.
    struct Placement: Sendable, Hashable {
        var cluster: String
        /// Whether a move of the account is under way: its requests get `serviceUnavailable`.
        var moving: Bool
    }

    let store: PostgresRecordStore

    /// Creates the table when it is missing and places every account of every cluster that has no
    /// row yet on the cluster that holds it (a server that had one database and now has clusters
    /// keeps its accounts where they are).
    func prepare(clusters: [(name: String, store: PostgresRecordStore)]) async throws {
        try await store.query(
            """
            CREATE TABLE IF NOT EXISTS account_placement (
                user_record_name TEXT PRIMARY KEY,
                username_folded TEXT NOT NULL UNIQUE,
                cluster TEXT NOT NULL,
                moving BOOLEAN NOT NULL DEFAULT FALSE
            )
            """, logger: store.logger)
        for (name, cluster) in clusters {
            // Each start counts; only a cluster holding accounts the directory does not place is read.
            let held = try await count("SELECT COUNT(*) FROM account", on: cluster)
            let placed = try await count(
                "SELECT COUNT(*) FROM account_placement WHERE cluster = \(name)", on: store)
            guard held != placed else { continue }
            try await cluster.withConnection { connection in
                var names: [String] = []
                var folded: [String] = []
                func flush() async throws {
                    try await store.query(
                        """
                        INSERT INTO account_placement (user_record_name, username_folded, cluster)
                        SELECT u, f, \(name) FROM unnest(\(names)::text[], \(folded)::text[]) AS t(u, f)
                        ON CONFLICT DO NOTHING
                        """, logger: store.logger)
                    names.removeAll(keepingCapacity: true)
                    folded.removeAll(keepingCapacity: true)
                }
                for try await (userRecordName, usernameFolded) in try await connection.query(
                    "SELECT user_record_name, username_folded FROM account", logger: store.logger
                ).decode((String, String).self) {
                    names.append(userRecordName)
                    folded.append(usernameFolded)
                    if names.count == 10_000 { try await flush() }
                }
                if !names.isEmpty { try await flush() }
            }
            let unplaced =
                held - (try await count("SELECT COUNT(*) FROM account_placement WHERE cluster = \(name)", on: store))
            if unplaced > 0 {
                // Its username is another cluster's account (two servers' databases joined), or the
                // account is being moved here right now. Its requests go to the account the directory names.
                store.logger.warning(
                    "cluster '\(name)' holds \(unplaced) accounts the directory places on another cluster; a username is one account over every cluster, so those are not reachable",
                    metadata: ["cluster": "\(name)"])
            }
        }
    }

    private func count(_ statement: PostgresQuery, on store: PostgresRecordStore) async throws -> Int64 {
        try await store.query(statement, logger: store.logger).first?.decode(Int64.self) ?? 0
    }

    func placement(userRecordName: String) async throws -> Placement? {
        try await placement(
            "SELECT cluster, moving FROM account_placement WHERE user_record_name = \(userRecordName)")
    }

    func placement(username: String) async throws -> Placement? {
        try await placement(
            """
            SELECT cluster, moving FROM account_placement
            WHERE username_folded = \(PostgresRecordStore.folded(username))
            """)
    }

    private func placement(_ statement: PostgresQuery) async throws -> Placement? {
        try await store.query(statement, logger: store.logger).decode((String, Bool).self).first
            .map { Placement(cluster: $0.0, moving: $0.1) }
    }

    /// Places a new account on `cluster`; false when its username is taken on any cluster.
    func place(_ account: StoredAccount, on cluster: String) async throws -> Bool {
        try await !store.query(
            """
            INSERT INTO account_placement (user_record_name, username_folded, cluster)
            VALUES (\(account.userRecordName), \(PostgresRecordStore.folded(account.username)), \(cluster))
            ON CONFLICT DO NOTHING RETURNING 1
            """, logger: store.logger
        ).isEmpty
    }

    /// Forgets an account (deleted, or its creation failed).
    func remove(userRecordName: String) async throws {
        try await store.query(
            "DELETE FROM account_placement WHERE user_record_name = \(userRecordName)", logger: store.logger)
    }

    /// Marks an account as moving; false when there is no such account or it is moving already.
    func beginMove(userRecordName: String) async throws -> Bool {
        try await !store.query(
            """
            UPDATE account_placement SET moving = TRUE
            WHERE user_record_name = \(userRecordName) AND NOT moving RETURNING 1
            """, logger: store.logger
        ).isEmpty
    }

    /// Ends a move that failed: the account stays where it was.
    func cancelMove(userRecordName: String) async throws {
        try await store.query(
            "UPDATE account_placement SET moving = FALSE WHERE user_record_name = \(userRecordName)",
            logger: store.logger)
    }

    /// Places a moved account on `cluster`, and ends its move.
    func finishMove(userRecordName: String, to cluster: String) async throws {
        try await store.query(
            """
            UPDATE account_placement SET cluster = \(cluster), moving = FALSE
            WHERE user_record_name = \(userRecordName)
            """, logger: store.logger)
    }

    /// How many accounts each cluster holds (clusters without any are left out).
    func accountCounts() async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for (cluster, count) in try await store.query(
            "SELECT cluster, COUNT(*) FROM account_placement GROUP BY cluster", logger: store.logger
        ).decode((String, Int64).self) {
            counts[cluster] = Int(count)
        }
        return counts
    }
}

/// Which cluster a new account goes to (`sync-server --placement`).
public enum PlacementRule: Sendable, Hashable, CustomStringConvertible {
    /// The cluster that holds the fewest accounts now (the first named of those tied).
    case fewestAccounts
    /// Always this cluster: to fill a new cluster, or to stop placing accounts on the others.
    case cluster(String)

    /// Reads `fewest` or a cluster's name.
    public init(_ text: String) {
        self = text == "fewest" ? .fewestAccounts : .cluster(text)
    }

    public var description: String {
        switch self {
        case .fewestAccounts: "fewest"
        case .cluster(let name): name
        }
    }

    /// The cluster of `names` (in the order the operator gave them) a new account goes to.
    func choose(among names: [String], counts: [String: Int]) -> String {
        switch self {
        case .cluster(let name): name
        case .fewestAccounts: names.min { counts[$0, default: 0] < counts[$1, default: 0] } ?? names[0]
        }
    }
}
