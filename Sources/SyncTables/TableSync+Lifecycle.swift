import Foundation
import GRDB
import SyncKit

/// Starting over: without local data, or keeping it.
extension TableSync {
    /// Stops syncing and removes every synced row from this device, with the layer's records of them
    /// (the server keeps everything). The next ``start()`` fetches everything again, as a new device.
    public func deleteLocalData() async throws {
        await stop()
        try await database.write { db in
            try self.applying(db) {
                for schema in self.schemas.sorted(by: { $0.rank > $1.rank }) {
                    try db.execute(sql: "DELETE FROM \(schema.name.quotedDatabaseIdentifier)")
                }
                for table in [
                    "synctables_metadata", "synctables_pending", "synctables_changes", "synctables_unapplied",
                    "synctables_state",
                ] {
                    try db.execute(sql: "DELETE FROM \(table)")
                }
            }
        }
        refreshCounts()
    }

    /// Syncs again from the start and keeps every local row: fetches every record (rows with unsent
    /// changes are merged by their table's policy), then sends every row, so that whatever the server
    /// lacks is uploaded. For a device whose sync state is in doubt (restored from a backup, say).
    public func resync() async throws {
        await stop()
        try await database.write { db in
            try db.execute(sql: "DELETE FROM synctables_state WHERE key LIKE 'engine.%' OR key = 'zoneSaved'")
            try self.queueEverything(zone: nil, db)
        }
        try start()
        try await fetchChanges()
        try await sendChanges()
    }
}
