import Foundation
import GRDB
import PostgresNIO
import SyncCore
import SyncServer
import SyncTesting

extension TestServer {
    /// The bytes of the fields of `owner`'s records in live zones, summed by the database from the
    /// rows themselves, not from the server's counters: what those counters must equal.
    func storedFieldBytes(owner: String) async throws -> Int64 {
        try await scalar(
            sqlite: """
                SELECT COALESCE(SUM(length(r.fields)), 0) FROM record r
                JOIN zone z ON z.owner = r.owner AND z.zone_name = r.zone_name
                WHERE r.owner = ? AND z.deleted = 0
                """,
            postgres: """
                SELECT COALESCE(SUM(octet_length(r.fields)), 0)::bigint FROM record r
                JOIN zone z ON z.owner = r.owner AND z.zone_name = r.zone_name
                WHERE r.owner = $1 AND NOT z.deleted
                """, owner)
    }

    /// How many rows (records and tombstones) the store holds for a zone of `owner`, deleted or not.
    func storedRows(owner: String, zoneName: String) async throws -> Int64 {
        try await scalar(
            sqlite: "SELECT COUNT(*) FROM record WHERE owner = ? AND zone_name = ?",
            postgres: "SELECT COUNT(*)::bigint FROM record WHERE owner = $1 AND zone_name = $2", owner, zoneName)
    }

    /// One number read with a query of the server's backend, its parameters bound in order.
    private func scalar(sqlite: String, postgres: String, _ arguments: String...) async throws -> Int64 {
        switch backend {
        case .sqlite:
            return try await DatabaseQueue(path: storagePath).read { db in
                try Int64.fetchOne(db, sql: sqlite, arguments: StatementArguments(arguments)) ?? 0
            }
        case .postgres:
            // Over clusters, the account's rows are on one of them: the sum is theirs.
            var sum: Int64 = 0
            for store in postgresStores {
                sum += try await store.withConnection { connection in
                    var bindings = PostgresBindings()
                    for argument in arguments { bindings.append(argument) }
                    for try await value in try await connection.query(
                        PostgresQuery(unsafeSQL: postgres, binds: bindings), logger: store.logger
                    ).decode(Int64.self) {
                        return value
                    }
                    return 0
                }
            }
            return sum
        }
    }
}
