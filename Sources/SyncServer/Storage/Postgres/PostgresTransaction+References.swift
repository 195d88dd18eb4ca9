import Foundation
import PostgresNIO
import SyncCore

/// The index of deleteSelf references (``ReferenceActions``) in PostgreSQL's SQL: `record_reference`,
/// a row per live record and record of its zone that it references with `deleteSelf`; each write one
/// statement, a column per array.
extension PostgresTransaction {
    func referrers(owner: String, zoneName: String, of targets: [String]) async throws -> [String] {
        try await query(
            """
            SELECT DISTINCT record_name FROM record_reference
            WHERE owner = \(owner) AND zone_name = \(zoneName) AND target_name = ANY(\(targets))
            """
        ).decode(String.self)
    }

    func insertReferences(_ entries: [ReferenceActions.Entry], owner: String) async throws {
        try await query(
            """
            INSERT INTO record_reference (owner, zone_name, target_name, record_name)
            SELECT \(owner), z, t, n
            FROM unnest(\(entries.map(\.zoneName))::text[], \(entries.map(\.targetName))::text[],
                \(entries.map(\.recordName))::text[]) AS u(z, t, n)
            ON CONFLICT DO NOTHING
            """)
    }

    func deleteReferences(owner: String, from keys: [RecordKey]) async throws {
        try await query(
            """
            DELETE FROM record_reference r
            USING unnest(\(keys.map(\.zoneName))::text[], \(keys.map(\.recordName))::text[]) AS u(z, n)
            WHERE r.owner = \(owner) AND r.zone_name = u.z AND r.record_name = u.n
            """)
    }

    func deleteReferences(owner: String, zoneName: String) async throws {
        try await query("DELETE FROM record_reference WHERE owner = \(owner) AND zone_name = \(zoneName)")
    }

    func liveRecords(containing bytes: [UInt8]) async throws -> [(owner: String, row: StoredRecord)] {
        try await query(
            """
            SELECT owner, \(unescaped: StoredRecord.columns) FROM record r
            WHERE NOT deleted AND position(\(Data(bytes)) IN fields) > 0 AND EXISTS (
                SELECT 1 FROM zone z WHERE z.owner = r.owner AND z.zone_name = r.zone_name AND NOT z.deleted)
            """
        ).compactMap { row in
            let cells = row.makeRandomAccess()
            return try StoredRecord(cells, from: 1).map { (owner: try cells[0].decode(String.self), row: $0) }
        }
    }
}
