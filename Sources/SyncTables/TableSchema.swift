import Foundation
import GRDB

/// A synced table as the database has it: its key, its synced columns and its references to other synced
/// tables, read with SQLite's own `PRAGMA`s and checked once, at start.
struct TableSchema: Sendable {
    /// A foreign key from this table to a synced table.
    struct Reference: Sendable, Hashable {
        let column: String
        let table: String
        /// `deleteSelf` on the server, and a cascade on every device.
        let cascades: Bool
    }

    let table: SyncedTable
    var name: String { table.name }
    let primaryKey: String
    /// The synced columns, the primary key first, then in the table's order.
    let columns: [String]
    /// The columns declared `NOT NULL`: a record without their field (from a version of the app without
    /// the column) leaves them at their default, or as they are.
    let notNullColumns: Set<String>
    let references: [Reference]
    /// The foreign-key column that is the record's `parent`.
    let parentColumn: String?
    /// Sent and applied in this order: a table comes after every table it references (0 for none).
    var rank = 0
    /// The table's number in `synctables_changes` (from 1), kept in `synctables_tables` from start to start.
    var code = 0

    /// The synced columns other than the primary key.
    var valueColumns: ArraySlice<String> { columns.dropFirst() }

    func reference(for column: String) -> Reference? { references.first { $0.column == column } }

    /// Reads `table` from `db` and checks that it can sync; throws ``TableSyncError/schema(_:)`` saying why
    /// not and what to do.
    static func read(_ table: SyncedTable, synced: Set<String>, _ db: Database) throws -> TableSchema {
        let quoted = table.name.quotedDatabaseIdentifier
        guard try db.tableExists(table.name) else {
            throw TableSyncError.schema(
                "the table \(table.name) is declared to sync but the database has no such table; create it in a migration before starting the sync"
            )
        }
        let info = try Row.fetchAll(db, sql: "PRAGMA table_info(\(quoted))")
        let keyColumns = info.filter { ($0["pk"] as Int? ?? 0) > 0 }
        guard keyColumns.count == 1, let key: String = keyColumns[0]["name"] else {
            throw TableSyncError.schema(
                "\(table.name) has \(keyColumns.isEmpty ? "no primary key" : "a primary key of \(keyColumns.count) columns"): a synced row is named by one key; give \(table.name) one TEXT primary key holding UUIDs (`id TEXT PRIMARY KEY NOT NULL`)"
            )
        }
        let keyType = (keyColumns[0]["type"] as String? ?? "").uppercased()
        guard keyType.contains("TEXT") || keyType.contains("CHAR") || keyType.contains("CLOB") || keyType == "UUID"
        else {
            throw TableSyncError.schema(
                "\(table.name)'s primary key \(key) is \(keyType.isEmpty ? "untyped" : keyType): rows made on two devices would get the same key; make it TEXT holding UUIDs (`\(key) TEXT PRIMARY KEY NOT NULL`)"
            )
        }
        var columns = [key]
        var notNull = Set<String>()
        for column in info {
            guard let name: String = column["name"], name != key else { continue }
            if table.localColumns.contains(name) { continue }
            columns.append(name)
            if (column["notnull"] as Int? ?? 0) != 0 { notNull.insert(name) }
        }
        let all = Set(info.compactMap { $0["name"] as String? })
        for name in table.encryptedColumns.union(table.localColumns).sorted() where !all.contains(name) {
            throw TableSyncError.schema(
                "\(table.name) has no column \(name), which its declaration names; correct the declaration or add the column"
            )
        }
        if table.encryptedColumns.contains(key) {
            throw TableSyncError.schema(
                "\(table.name)'s primary key \(key) cannot be encrypted: it names the record on the server; encrypt other columns"
            )
        }
        var references: [Reference] = []
        let foreignKeys = try Row.fetchAll(db, sql: "PRAGMA foreign_key_list(\(quoted))")
        for (id, rows) in Dictionary(grouping: foreignKeys, by: { $0["id"] as Int? ?? 0 }).sorted(by: {
            $0.key < $1.key
        }) {
            guard rows.count == 1, let from: String = rows[0]["from"], let destination: String = rows[0]["table"]
            else {
                throw TableSyncError.schema(
                    "\(table.name)'s foreign key \(id) spans \(rows.count) columns; a synced reference is one column holding the other row's key"
                )
            }
            if table.localColumns.contains(from) { continue }
            guard synced.contains(destination) else {
                throw TableSyncError.schema(
                    "\(table.name).\(from) refers to \(destination), which does not sync: another device would get a row pointing at nothing; declare \(destination) as synced too, or make \(from) a local column"
                )
            }
            let onDelete = (rows[0]["on_delete"] as String? ?? "").uppercased()
            references.append(Reference(column: from, table: destination, cascades: onDelete == "CASCADE"))
        }
        var parent = table.parentColumn
        if let parent {
            guard references.contains(where: { $0.column == parent }) else {
                throw TableSyncError.schema(
                    "\(table.name)'s parent column \(parent) is not a foreign key to a synced table; declare the foreign key, or name another column"
                )
            }
        } else if references.count == 1 {
            parent = references[0].column
        }
        return TableSchema(
            table: table, primaryKey: key, columns: columns, notNullColumns: notNull,
            references: references,
            parentColumn: parent)
    }

    /// Reads every declared table, checks them against each other and against the columns an earlier start
    /// synced (`earlier`, by table), and ranks them parents first.
    static func readAll(_ tables: [SyncedTable], earlier: [String: [String]], _ db: Database) throws -> [TableSchema] {
        let names = Set(tables.map(\.name))
        if names.count != tables.count {
            throw TableSyncError.schema("a table is declared twice; declare each synced table once")
        }
        let types = Dictionary(grouping: tables, by: \.recordType)
        if let clash = types.first(where: { $0.value.count > 1 }) {
            throw TableSyncError.schema(
                "tables \(clash.value.map(\.name).sorted().joined(separator: " and ")) share the record type \(clash.key); give each its own"
            )
        }
        var schemas = try tables.map { try read($0, synced: names, db) }
        for schema in schemas {
            let gone = (earlier[schema.name] ?? []).filter { !schema.columns.contains($0) }
            if !gone.isEmpty {
                throw TableSyncError.schema(
                    "\(schema.name) no longer has \(gone.joined(separator: ", ")), which an earlier version synced: other devices still send \(gone.count == 1 ? "it" : "them"), and \(gone.count == 1 ? "its" : "their") values would be lost; keep \(gone.count == 1 ? "the column" : "the columns") (a rename is a removal: add the new column beside the old one)"
                )
            }
        }
        // Parents first: a table's rank is one more than the highest rank of the tables it refers to
        // (a reference to itself or around a cycle does not count).
        var rank: [String: Int] = [:]
        func rankOf(_ name: String, visiting: Set<String>) -> Int {
            if let known = rank[name] { return known }
            guard let schema = schemas.first(where: { $0.name == name }) else { return 0 }
            let parents = schema.references.map(\.table).filter { $0 != name && !visiting.contains($0) }
            let value = parents.map { rankOf($0, visiting: visiting.union([name])) + 1 }.max() ?? 0
            rank[name] = value
            return value
        }
        for index in schemas.indices { schemas[index].rank = rankOf(schemas[index].name, visiting: []) }
        return schemas
    }
}
