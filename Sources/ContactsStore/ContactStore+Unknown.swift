import ContactsModel
import Foundation
import GRDB
import SyncCore

extension ContactStore {
    /// The names of the contact records of `recordIDs` that this store knows nothing of: no contact of that
    /// ID, no last known server record and nothing queued. Merging such a record only stores it; the merge
    /// would look for each of the three one statement at a time, and in a first download every record is
    /// such a one. (Only canonical names are looked for; any other name is left to the merge.)
    static func unknownContacts(_ recordIDs: [SyncCore.RecordValue.ID], _ db: GRDB.Database) throws -> Set<String> {
        // Each name once (a hostile server may send one twice), so that a statement's keys fill its placeholders.
        var ids: Set<UUID> = []
        for recordID in recordIDs {
            if let id = UUID(canonical: recordID.recordName), id.canonicalString == recordID.recordName {
                ids.insert(id)
            }
        }
        var unknown = Set(ids.map(\.canonicalString))
        try inChunks(Array(ids)) { chunk, marks in
            let keys = chunk.map(RecordKey.key)
            let stored = try DatabaseValue.fetchCursor(
                db,
                sql: """
                    SELECT id FROM contact WHERE id IN (\(marks))
                    UNION ALL SELECT id FROM serverRecord WHERE id IN (\(marks))
                    """,
                arguments: StatementArguments(keys + keys))
            while let key = try stored.next() {
                if let name = RecordKey.name(key) { unknown.remove(name) }
            }
            let outboxKeys = Dictionary(
                uniqueKeysWithValues: chunk.map {
                    (OutboxEntry.recordKey(named: $0.canonicalString), $0.canonicalString)
                })
            let queued = try String.fetchCursor(
                db, sql: "SELECT key FROM outbox WHERE key IN (\(marks))",
                arguments: StatementArguments(Array(outboxKeys.keys)))
            while let key = try queued.next() {
                if let name = outboxKeys[key] { unknown.remove(name) }
            }
        }
        return unknown
    }
}
