import ContactsModel
import Foundation
import GRDB
import SyncCore
import SyncKit

/// The conflict log's rows (``ContactConflict``), one per entry, newest first.
extension ContactStore {
    /// Every entry, newest first.
    package func conflicts() throws -> [ContactConflict] {
        try queue.read { db in
            try Data.fetchAll(db, sql: "SELECT json FROM conflict ORDER BY date DESC, id").compactMap(
                ContactConflict.decoded)
        }
    }

    package func conflictCount() throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM conflict") ?? 0 }
    }

    /// The entry whose ID is `text` or starts with it (as `contacts conflicts` prints them); throws when
    /// there is none, or more than one.
    package func resolveConflict(_ text: String) throws -> ContactConflict {
        let prefix = text.trimmingCharacters(in: .whitespaces).uppercased()
        let matches = try queue.read { db in
            guard !prefix.isEmpty, prefix.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return [Data]() }
            return try Data.fetchAll(
                db, sql: "SELECT json FROM conflict WHERE id >= ? AND id < ? LIMIT 2",
                arguments: [prefix, prefix + "\u{7F}"])
        }.compactMap(ContactConflict.decoded)
        guard let first = matches.first else {
            throw DeviceError.noSuchConflict(text)
        }
        guard matches.count == 1 else {
            throw DeviceError.ambiguousConflict(text)
        }
        return first
    }

    // MARK: Rows (inside transactions)

    static func conflict(_ id: UUID, _ db: GRDB.Database) throws -> ContactConflict? {
        try Data.fetchOne(db, sql: "SELECT json FROM conflict WHERE id = ?", arguments: [id.uuidString]).flatMap(
            ContactConflict.decoded)
    }

    static func putConflict(_ entry: ContactConflict, _ db: GRDB.Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO conflict (id, zoneName, ownerName, date, json) VALUES (?, ?, ?, ?, ?)",
            arguments: [
                entry.id.uuidString, entry.zoneID.zoneName, entry.zoneID.ownerName, entry.date.timeIntervalSince1970,
                ContactConflict.encoded(entry),
            ])
    }

    static func removeConflict(_ id: UUID, _ db: GRDB.Database) throws {
        try db.execute(sql: "DELETE FROM conflict WHERE id = ?", arguments: [id.uuidString])
    }

    static func conflicts(in zoneID: RecordZone.ID, _ db: GRDB.Database) throws -> [ContactConflict] {
        try Data.fetchAll(
            db, sql: "SELECT json FROM conflict WHERE zoneName = ? AND ownerName = ?",
            arguments: [zoneID.zoneName, zoneID.ownerName]
        ).compactMap(ContactConflict.decoded)
    }
}

extension ContactStore.Transaction {
    /// Logs `entry` and queues its record, so that every device sees it.
    func logConflict(_ entry: ContactConflict) throws {
        try ContactStore.putConflict(entry, db)
        try enqueue(.record(.saveRecord(entry.recordID)))
    }

    /// Takes an entry out of the log (restored or dismissed) and queues its record's deletion.
    func removeConflict(_ entry: ContactConflict) throws {
        try ContactStore.removeConflict(entry.id, db)
        try enqueue(.record(.deleteRecord(entry.recordID)))
    }
}
