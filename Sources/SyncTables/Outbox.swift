import Foundation
import GRDB
import SyncCore

/// The outbox: the triggers' appended changes (`synctables_changes`) folded into one entry per row
/// (`synctables_pending`).
enum Outbox {
    /// Folds the appended changes into the outbox, in the order they were made (a row's last change
    /// decides: a save, or a delete), and forgets the deletes of rows the server never had. Every write of
    /// the layer does this first, so that it sees the app's latest changes.
    static func fold(_ db: Database) throws {
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM synctables_changes)") == true else { return }
        try db.execute(
            sql: """
                INSERT INTO synctables_pending (tableName, recordName, operation, changedAt)
                SELECT t.tableName, c.recordName, CASE WHEN c.change < 0 THEN 'delete' ELSE 'save' END,
                    (c.changedAt - 2440587.5) * 86400.0
                FROM synctables_changes c JOIN synctables_tables t ON t.code = abs(c.change) ORDER BY c.seq
                ON CONFLICT (tableName, recordName) DO UPDATE SET operation = excluded.operation,
                    version = version + 1, changedAt = excluded.changedAt, heldBecause = NULL;
                DELETE FROM synctables_pending WHERE operation = 'delete'
                    AND EXISTS (SELECT 1 FROM synctables_changes c JOIN synctables_tables t ON t.code = abs(c.change)
                        WHERE t.tableName = synctables_pending.tableName AND c.recordName = synctables_pending.recordName)
                    AND NOT EXISTS (SELECT 1 FROM synctables_metadata m
                        WHERE m.tableName = synctables_pending.tableName AND m.recordName = synctables_pending.recordName
                        AND m.systemFields IS NOT NULL);
                DELETE FROM synctables_changes;
                """)
    }

    /// Every row with a change not on the server, as the outbox will hold it after the next fold (read
    /// without writing: the changes appended since the last fold lie over the outbox's entries).
    static func entries(_ db: Database) throws -> [PendingChange] {
        var entries: [String: PendingChange] = [:]
        var order: [String] = []
        func put(_ change: PendingChange) {
            let key = "\(change.table)\u{0}\(change.recordName)"
            if entries[key] == nil { order.append(key) }
            entries[key] = change
        }
        for row in try Row.fetchAll(db, sql: "SELECT * FROM synctables_pending ORDER BY changedAt") {
            put(
                PendingChange(
                    table: row["tableName"], recordName: row["recordName"],
                    operation: PendingChange.Operation(rawValue: row["operation"]) ?? .save,
                    changedAt: Date(timeIntervalSince1970: row["changedAt"]), heldBecause: row["heldBecause"]))
        }
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT t.tableName, c.recordName, c.change, (c.changedAt - 2440587.5) * 86400.0 AS changedAt
                FROM synctables_changes c JOIN synctables_tables t ON t.code = abs(c.change) ORDER BY c.seq
                """)
        {
            put(
                PendingChange(
                    table: row["tableName"], recordName: row["recordName"],
                    operation: (row["change"] as Int) < 0 ? .delete : .save,
                    changedAt: Date(timeIntervalSince1970: row["changedAt"]), heldBecause: nil))
        }
        return order.compactMap { entries[$0] }
    }

    /// Whether changes wait for this account's own zones, and for zones shared with it: asked after every
    /// write to the outbox, so it stops at the first of each (a change not folded yet counts as the
    /// account's own until its zone is known).
    static func waiting(_ db: Database) throws -> (own: Bool, shared: Bool) {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT EXISTS (SELECT 1 FROM synctables_changes)
                    OR EXISTS (SELECT 1 FROM synctables_pending p LEFT JOIN synctables_metadata m USING (tableName, recordName)
                        WHERE p.heldBecause IS NULL AND (m.ownerName IS NULL OR m.ownerName = ?1)) AS own,
                    EXISTS (SELECT 1 FROM synctables_pending p JOIN synctables_metadata m USING (tableName, recordName)
                        WHERE p.heldBecause IS NULL AND m.ownerName <> ?1) AS shared
                """, arguments: [RecordZone.ID.defaultOwnerName])
        return (row?["own"] ?? false, row?["shared"] ?? false)
    }

    /// How many rows have changes not on the server: the outbox's entries, and the rows changed since the
    /// last fold that have none (few: the next write of the layer folds them).
    static func count(_ db: Database) throws -> Int {
        try Int.fetchOne(
            db,
            sql: """
                SELECT (SELECT COUNT(*) FROM synctables_pending) + (SELECT COUNT(*) FROM (
                    SELECT DISTINCT t.tableName, c.recordName FROM synctables_changes c
                    JOIN synctables_tables t ON t.code = abs(c.change) WHERE NOT EXISTS (
                        SELECT 1 FROM synctables_pending p WHERE p.tableName = t.tableName AND p.recordName = c.recordName)))
                """) ?? 0
    }
}
