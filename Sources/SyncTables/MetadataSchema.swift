import Foundation
import GRDB

/// The layer's own tables in the app's database, and the triggers on each synced table that feed them.
///
/// - `synctables_metadata`: one row per synced row the server knows or is about to: its record's zone,
///   the last record the server returned (system fields and values), its share and the access this
///   account has. Join it to the app's tables by `tableName` and `recordName` (the row's key).
/// - `synctables_changes`: what the triggers write in the app's own transactions, one short row appended per
///   change (the cheapest write SQLite has: no index, no conflict to look for), folded into the outbox by
///   the layer's next write of its own (``Outbox/fold(_:)``).
/// - `synctables_tables`: each synced table's code in `synctables_changes`, and the columns it synced at the
///   last start (to refuse a removed column).
/// - `synctables_pending`: the outbox: one row per changed row, `save` or `delete`, with when it changed
///   and why it is held back, if it is.
/// - `synctables_unapplied`: records fetched that cannot be written yet: their parent has not arrived, or
///   their table does not exist in this version of the app.
/// - `synctables_conflicts`: every value a conflict overwrote, with what was kept.
/// - `synctables_state`: the engines' states and the layer's settings.
/// - `synctables_applying`: holds a row only inside the layer's own writes, which the read-only guards skip.
enum MetadataSchema {
    static let statements = [
        """
        CREATE TABLE IF NOT EXISTS synctables_metadata (
            tableName TEXT NOT NULL,
            recordName TEXT NOT NULL,
            zoneName TEXT NOT NULL,
            ownerName TEXT NOT NULL,
            systemFields BLOB,
            serverFields BLOB,
            serverModifiedAt REAL,
            shareRecordName TEXT,
            permission TEXT NOT NULL DEFAULT 'owner' CHECK (permission IN ('owner', 'readWrite', 'readOnly')),
            PRIMARY KEY (tableName, recordName)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS synctables_pending (
            tableName TEXT NOT NULL,
            recordName TEXT NOT NULL,
            operation TEXT NOT NULL CHECK (operation IN ('save', 'delete')),
            version INTEGER NOT NULL DEFAULT 1,
            changedAt REAL NOT NULL,
            heldBecause TEXT,
            PRIMARY KEY (tableName, recordName)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS synctables_unapplied (
            recordType TEXT NOT NULL,
            recordName TEXT NOT NULL,
            zoneName TEXT NOT NULL,
            ownerName TEXT NOT NULL,
            record BLOB NOT NULL,
            reason TEXT NOT NULL,
            receivedAt REAL NOT NULL,
            PRIMARY KEY (recordType, recordName, zoneName, ownerName)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS synctables_conflicts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tableName TEXT NOT NULL,
            recordName TEXT NOT NULL,
            columnName TEXT NOT NULL,
            policy TEXT NOT NULL,
            kept TEXT,
            lost TEXT,
            lostFrom TEXT NOT NULL CHECK (lostFrom IN ('device', 'server')),
            at REAL NOT NULL
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS synctables_changes (
            seq INTEGER PRIMARY KEY,
            change INTEGER NOT NULL,
            recordName TEXT NOT NULL,
            changedAt REAL NOT NULL
        )
        """,
        "CREATE INDEX IF NOT EXISTS synctables_pending_order ON synctables_pending (tableName, operation, changedAt)",
        "CREATE TABLE IF NOT EXISTS synctables_state (key TEXT PRIMARY KEY NOT NULL, value BLOB)",
        """
        CREATE TABLE IF NOT EXISTS synctables_tables (
            tableName TEXT PRIMARY KEY NOT NULL,
            columns TEXT NOT NULL,
            code INTEGER NOT NULL UNIQUE
        )
        """,
        "CREATE TABLE IF NOT EXISTS synctables_applying (flag INTEGER)",
    ]

    /// The device's clock as seconds since 1970, in SQL (`unixepoch('subsec')` needs SQLite 3.42).
    static let now = "((julianday('now') - 2440587.5) * 86400.0)"

    /// Creates the layer's tables (if missing) and replaces every synced table's triggers; with `guards`,
    /// those that refuse writes to rows shared read-only too (``installGuards(_:_:)``).
    static func install(_ schemas: [TableSchema], guards: Bool, _ db: Database) throws {
        for statement in statements { try db.execute(sql: statement) }
        let existing = try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'synctables\\_%' ESCAPE '\\'")
        for name in existing { try db.execute(sql: "DROP TRIGGER \(name.quotedDatabaseIdentifier)") }
        for schema in schemas { try createTriggers(schema, db) }
        if guards { try installGuards(schemas, db) }
    }

    /// A change, appended to `synctables_changes` as little as can say it: the table's code
    /// (``TableSchema/code``), positive for a save of `row`'s key and negative for a delete, the key, and the
    /// time as SQLite keeps it (a Julian day; ``Outbox/fold(_:)`` makes it seconds since 1970).
    private static func record(_ schema: TableSchema, _ row: String, delete: Bool) -> String {
        """
        INSERT INTO synctables_changes (change, recordName, changedAt)
            VALUES (\(delete ? -schema.code : schema.code), \(row).\(schema.primaryKey.quotedDatabaseIdentifier), julianday('now'));
        """
    }

    /// Outside the layer's own writes (which hold a row in `synctables_applying`). The change triggers do
    /// not ask (a question on every row the app writes): the layer removes what its own writes appended
    /// (``TableSync/applying(_:_:)``).
    private static let outside = "NOT EXISTS (SELECT 1 FROM synctables_applying)"

    private static func createTriggers(_ schema: TableSchema, _ db: Database) throws {
        let table = schema.name.quotedDatabaseIdentifier
        let key = schema.primaryKey.quotedDatabaseIdentifier
        let prefix = "synctables_\(schema.name)"
        try db.execute(
            sql: """
                CREATE TRIGGER \("\(prefix)_insert".quotedDatabaseIdentifier) AFTER INSERT ON \(table)
                BEGIN \(record(schema, "NEW", delete: false)) END;
                CREATE TRIGGER \("\(prefix)_update".quotedDatabaseIdentifier) AFTER UPDATE ON \(table)
                BEGIN \(record(schema, "NEW", delete: false)) END;
                CREATE TRIGGER \("\(prefix)_rekey".quotedDatabaseIdentifier) AFTER UPDATE OF \(key) ON \(table)
                WHEN OLD.\(key) IS NOT NEW.\(key) BEGIN \(record(schema, "OLD", delete: true)) END;
                CREATE TRIGGER \("\(prefix)_delete".quotedDatabaseIdentifier) AFTER DELETE ON \(table)
                BEGIN \(record(schema, "OLD", delete: true)) END;
                """)
    }

    /// Triggers that refuse, before anything is queued, a write to a row shared with this account read-only
    /// (and a new child under one). Installed once a zone is shared with this account: until then no
    /// write pays for the check.
    static func installGuards(_ schemas: [TableSchema], _ db: Database) throws {
        for schema in schemas {
            let table = schema.name.quotedDatabaseIdentifier
            let key = schema.primaryKey.quotedDatabaseIdentifier
            let name = schema.name.sqlLiteral
            let prefix = "synctables_\(schema.name)_readonly"
            let readOnly = { (row: String) in
                "EXISTS (SELECT 1 FROM synctables_metadata m WHERE m.tableName = \(name) AND m.recordName = \(row).\(key) AND m.permission = 'readOnly')"
            }
            let message = { (verb: String) in
                "\(schema.name): this row is shared with you read-only; its owner can \(verb) it, or give you read-write access"
                    .sqlLiteral
            }
            try db.execute(
                sql: """
                    CREATE TRIGGER IF NOT EXISTS \("\(prefix)_update".quotedDatabaseIdentifier) BEFORE UPDATE ON \(table)
                    WHEN \(outside) AND \(readOnly("OLD")) BEGIN SELECT RAISE(ABORT, \(message("change"))); END;
                    CREATE TRIGGER IF NOT EXISTS \("\(prefix)_delete".quotedDatabaseIdentifier) BEFORE DELETE ON \(table)
                    WHEN \(outside) AND \(readOnly("OLD")) BEGIN SELECT RAISE(ABORT, \(message("delete"))); END;
                    """)
            guard let parent = schema.parentColumn, let reference = schema.reference(for: parent) else { continue }
            let condition = """
                EXISTS (SELECT 1 FROM synctables_metadata m WHERE m.tableName = \(reference.table.sqlLiteral)
                    AND m.recordName = NEW.\(parent.quotedDatabaseIdentifier) AND m.permission = 'readOnly')
                """
            let childMessage =
                "\(schema.name): its \(parent) is shared with you read-only; ask its owner for read-write access"
                .sqlLiteral
            for (event, suffix) in [("INSERT", "insert"), ("UPDATE", "reparent")] {
                try db.execute(
                    sql: """
                        CREATE TRIGGER IF NOT EXISTS \("\(prefix)_\(suffix)".quotedDatabaseIdentifier) BEFORE \(event) ON \(table)
                        WHEN \(outside) AND \(condition) BEGIN SELECT RAISE(ABORT, \(childMessage)); END
                        """)
            }
        }
    }
}

extension String {
    /// The string as an SQL literal: `'it''s'`.
    var sqlLiteral: String { "'" + replacingOccurrences(of: "'", with: "''") + "'" }
}
