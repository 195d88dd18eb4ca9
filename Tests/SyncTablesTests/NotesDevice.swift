import Foundation
import GRDB
import SyncCrypto
import SyncKit
import SyncTables
import SyncTesting

/// A device of the notes schema the tests share: its own SQLite file, its migrations, and a
/// ``TableSync`` on an account of the test server. Syncs only when a test says so.
final class NotesDevice: Sendable {
    static let schema = [
        """
        CREATE TABLE note (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL DEFAULT '', body TEXT NOT NULL DEFAULT '',
            attachment BLOB, pinned INTEGER NOT NULL DEFAULT 0)
        """,
        "CREATE TABLE tag (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL)",
        """
        CREATE TABLE noteTag (id TEXT PRIMARY KEY NOT NULL,
            noteID TEXT NOT NULL REFERENCES note(id) ON DELETE CASCADE,
            tagID TEXT NOT NULL REFERENCES tag(id) ON DELETE CASCADE)
        """,
        """
        CREATE TABLE comment (id TEXT PRIMARY KEY NOT NULL, noteID TEXT REFERENCES note(id) ON DELETE CASCADE,
            text TEXT NOT NULL DEFAULT '')
        """,
    ]

    static func tables(note: ConflictPolicy = .lastEditPerField) -> [SyncedTable] {
        [
            SyncedTable("note", encryptedColumns: ["body"], conflicts: note),
            SyncedTable("tag"),
            SyncedTable("noteTag", parentColumn: "noteID"),
            SyncedTable("comment"),
        ]
    }

    let name: String
    let path: String
    let database: DatabaseQueue
    let sync: TableSync

    /// A device of `username` on `server` (the account is made on first use).
    init(
        _ name: String, username: String, server: TestServer, path: String? = nil, tables: [SyncedTable]? = nil,
        schema: [String] = NotesDevice.schema, configuration: TableSync.Configuration = .testing
    ) throws {
        self.name = name
        self.path = path ?? TemporaryFiles.path("notes-\(name)", extension: "sqlite")
        database = try DatabaseQueue(path: self.path)
        try database.write { db in
            for statement in schema where try !db.tableExists(Self.tableName(in: statement)) {
                try db.execute(sql: statement)
            }
        }
        sync = try TableSync(
            database: database, tables: tables ?? Self.tables(), container: Self.container(username, server),
            configuration: configuration)
        try sync.start()
    }

    static func container(_ username: String, _ server: TestServer) -> Container {
        Container(
            identifier: "notes-tests",
            configuration: ContainerConfiguration(
                serverURL: URL(string: server.baseURL)!, username: username, password: "password of \(username)",
                signUp: true, passphrase: "passphrase of \(username)"),
            // What the tests check is the sync, not the key's cost: the default takes seconds on a busy machine.
            keyDerivation: try! .init(costN: 1 << 10, blockSizeR: 8, parallelismP: 1))
    }

    private static func tableName(in statement: String) -> String {
        String(statement.split(separator: " ")[2].prefix { $0 != "(" })
    }

    func execute(_ sql: String, _ arguments: StatementArguments = []) throws {
        try database.write { db in try db.execute(sql: sql, arguments: arguments) }
    }

    func strings(_ sql: String, _ arguments: StatementArguments = []) throws -> [String] {
        try database.read { db in try String.fetchAll(db, sql: sql, arguments: arguments) }
    }

    func string(_ sql: String, _ arguments: StatementArguments = []) throws -> String? {
        try database.read { db in try String.fetchOne(db, sql: sql, arguments: arguments) }
    }

    func count(_ table: String) throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0 }
    }

    func stop() async {
        await sync.stop()
    }
}

extension TableSync.Configuration {
    /// The tests sync when they say so.
    static var testing: Self {
        var configuration = Self()
        configuration.automaticallySync = false
        return configuration
    }
}
