import Foundation
import GRDB
import SyncCore

/// The index of deleteSelf references (``ReferenceActions``) in SQLite's SQL: `record_reference`, a row
/// per live record and record of its zone that it references with `deleteSelf`.
extension SQLiteTransaction {
    func referrers(owner: String, zoneName: String, of targets: [String]) throws -> [String] {
        try String.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT DISTINCT record_name FROM record_reference
                    WHERE owner = ? AND zone_name = ? AND target_name IN (SELECT value FROM json_each(?))
                    """), arguments: [owner, zoneName, Self.jsonList(targets) { $0 }])
    }

    /// A prepared statement per entry: entries are few (a record's deleteSelf references), and SQLite
    /// runs each without a round trip.
    func insertReferences(_ entries: [ReferenceActions.Entry], owner: String) throws {
        let insert = try db.cachedStatement(
            sql: """
                INSERT OR IGNORE INTO record_reference (owner, zone_name, target_name, record_name)
                VALUES (?, ?, ?, ?)
                """)
        for entry in entries {
            try insert.execute(arguments: [owner, entry.zoneName, entry.targetName, entry.recordName])
        }
    }

    func deleteReferences(owner: String, from keys: [RecordKey]) throws {
        let delete = try db.cachedStatement(
            sql: """
                DELETE FROM record_reference
                WHERE owner = ? AND zone_name = ? AND record_name IN (SELECT value FROM json_each(?))
                """)
        for (zoneName, zoneKeys) in Dictionary(grouping: keys, by: \.zoneName) {
            try delete.execute(arguments: [owner, zoneName, Self.jsonList(zoneKeys, \.recordName)])
        }
    }

    func deleteReferences(owner: String, zoneName: String) throws {
        try db.execute(
            sql: "DELETE FROM record_reference WHERE owner = ? AND zone_name = ?", arguments: [owner, zoneName])
    }

    /// (Fields written by early versions may be text: compared as bytes.)
    func liveRecords(containing bytes: [UInt8]) throws -> [(owner: String, row: StoredRecord)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT \(StoredRecord.columns), owner FROM record
                WHERE deleted = 0 AND instr(CAST(fields AS BLOB), ?) > 0 AND EXISTS (
                    SELECT 1 FROM zone
                    WHERE zone.owner = record.owner AND zone.zone_name = record.zone_name AND zone.deleted = 0)
                """, arguments: [Data(bytes)]
        ).map { (owner: $0[14], row: Self.record(from: $0)) }
    }
}
