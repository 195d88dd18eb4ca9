import ContactsModel
import Foundation
import GRDB
import SyncCore

/// The records refused as tampered (``TamperedRecord``), newest first, and the sealed versions this device
/// has seen, which a fetched record may not go below.
extension ContactStore {
    /// Every refused record, newest first.
    package func tamperedRecords() throws -> [TamperedRecord] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return try queue.read { db in
            try Data.fetchAll(db, sql: "SELECT json FROM tamperedRecord ORDER BY date DESC, seq DESC").compactMap {
                try? decoder.decode(TamperedRecord.self, from: $0)
            }
        }
    }

    /// How many records were refused.
    package func tamperedCount() throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM tamperedRecord") ?? 0 }
    }

    /// Keeps a refused record; the same record as it arrived, refused again, is kept once.
    static func putTampered(_ entry: TamperedRecord, _ db: GRDB.Database) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .millisecondsSince1970
        try db.execute(
            sql: """
                INSERT INTO tamperedRecord (date, recordName, arrived, json)
                SELECT ?, ?, ?, ?
                WHERE NOT EXISTS (SELECT 1 FROM tamperedRecord WHERE recordName = ? AND arrived = ?)
                """,
            arguments: [
                entry.date.timeIntervalSince1970, entry.recordName, entry.record, try encoder.encode(entry),
                entry.recordName, entry.record,
            ])
    }

    /// The sealed version of the last known server record of each of `names` that has one.
    func sealedVersions(of names: [String]) throws -> [String: UInt64] {
        try queue.read { db in try Self.sealedVersions(of: names, db) }
    }

    /// The sealed version of the last known server record of each of `names` that has one.
    static func sealedVersions(of names: [String], _ db: GRDB.Database) throws -> [String: UInt64] {
        var versions: [String: UInt64] = [:]
        try inChunks(names) { chunk, marks in
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT id, sealedVersion FROM serverRecord WHERE sealedVersion IS NOT NULL AND id IN (\(marks))",
                arguments: StatementArguments(chunk.map(RecordKey.key(named:))))
            for row in rows {
                guard let name = RecordKey.name(row["id"]) else { continue }
                versions[name] = UInt64(bitPattern: row["sealedVersion"] as Int64)
            }
        }
        return versions
    }
}
