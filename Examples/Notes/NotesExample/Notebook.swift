import Foundation
import GRDB
import SyncKit
import SyncTables

/// A notebook on one device: notes with tags and attachments in a SQLite file, synced by ``TableSync``
/// with no sync code of its own. Everything sync-related is the declaration in ``tables``.
public final class Notebook: Sendable {
    /// The app's schema, as its migrations make it.
    public static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE note (
                        id TEXT PRIMARY KEY NOT NULL,
                        title TEXT NOT NULL,
                        body TEXT NOT NULL DEFAULT '',
                        modifiedAt TEXT NOT NULL
                    );
                    CREATE TABLE tag (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
                    CREATE TABLE noteTag (
                        id TEXT PRIMARY KEY NOT NULL,
                        noteID TEXT NOT NULL REFERENCES note(id) ON DELETE CASCADE,
                        tagID TEXT NOT NULL REFERENCES tag(id) ON DELETE CASCADE
                    );
                    CREATE TABLE attachment (
                        id TEXT PRIMARY KEY NOT NULL,
                        noteID TEXT NOT NULL REFERENCES note(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        bytes BLOB NOT NULL
                    );
                    """)
        }
        return migrator
    }

    /// What syncs, and how: the note's body is encrypted on the device; a note's links and attachments
    /// belong to it (shared with it, deleted with it); text edited on two devices is merged by lines.
    public static let tables = [
        SyncedTable("note", encryptedColumns: ["body"], conflicts: .threeWayMerge),
        SyncedTable("tag"),
        SyncedTable("noteTag", parentColumn: "noteID"),
        SyncedTable("attachment"),
    ]

    public struct Note: Sendable, Hashable {
        public let id: String
        public let title: String
        public let body: String
        public let tags: [String]
        /// Attachment names and sizes in bytes.
        public let attachments: [(name: String, size: Int)]
        public let modifiedAt: String

        public static func == (lhs: Note, rhs: Note) -> Bool { lhs.id == rhs.id && lhs.modifiedAt == rhs.modifiedAt }
        public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    }

    public let database: DatabaseQueue
    public let sync: TableSync

    /// Opens (or creates) the notebook at `path`, syncing through `container`.
    public init(path: String, container: Container, automaticallySync: Bool = false) throws {
        database = try DatabaseQueue(path: path)
        try Self.migrator.migrate(database)
        var configuration = TableSync.Configuration()
        configuration.zoneName = "Notes"
        configuration.automaticallySync = automaticallySync
        sync = try TableSync(
            database: database, tables: Self.tables, container: container, configuration: configuration)
    }

    /// Adds a note with its tags and attachments, in one transaction; returns its ID.
    @discardableResult
    public func add(
        title: String, body: String = "", tags: [String] = [], attachments: [(name: String, bytes: Data)] = []
    )
        throws -> String
    {
        let id = UUID().uuidString.lowercased()
        try database.write { db in
            try db.execute(
                sql: "INSERT INTO note (id, title, body, modifiedAt) VALUES (?, ?, ?, ?)",
                arguments: [id, title, body, Self.now()])
            for tag in tags { try Self.tag(id, with: tag, db) }
            for attachment in attachments {
                try db.execute(
                    sql: "INSERT INTO attachment (id, noteID, name, bytes) VALUES (?, ?, ?, ?)",
                    arguments: [UUID().uuidString.lowercased(), id, attachment.name, attachment.bytes])
            }
        }
        return id
    }

    /// Changes a note's title or body.
    public func edit(_ id: String, title: String? = nil, body: String? = nil) throws {
        try database.write { db in
            let note = try Self.resolve(id, db)
            if let title { try db.execute(sql: "UPDATE note SET title = ? WHERE id = ?", arguments: [title, note]) }
            if let body { try db.execute(sql: "UPDATE note SET body = ? WHERE id = ?", arguments: [body, note]) }
            try db.execute(sql: "UPDATE note SET modifiedAt = ? WHERE id = ?", arguments: [Self.now(), note])
        }
    }

    /// Tags a note.
    public func tag(_ id: String, with name: String) throws {
        try database.write { db in try Self.tag(try Self.resolve(id, db), with: name, db) }
    }

    /// Deletes a note, with its tag links and attachments (on every device).
    public func delete(_ id: String) throws {
        try database.write { db in
            try db.execute(sql: "DELETE FROM note WHERE id = ?", arguments: [try Self.resolve(id, db)])
        }
    }

    /// Every note, newest first.
    public func notes() throws -> [Note] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM note ORDER BY modifiedAt DESC, id").map { row in
                let id: String = row["id"]
                return Note(
                    id: id, title: row["title"], body: row["body"],
                    tags: try String.fetchAll(
                        db,
                        sql:
                            "SELECT tag.name FROM noteTag JOIN tag ON tag.id = noteTag.tagID WHERE noteID = ? ORDER BY tag.name",
                        arguments: [id]),
                    attachments: try Row.fetchAll(
                        db, sql: "SELECT name, length(bytes) AS size FROM attachment WHERE noteID = ? ORDER BY name",
                        arguments: [id]
                    ).map { (name: $0["name"], size: $0["size"]) }, modifiedAt: row["modifiedAt"])
            }
        }
    }

    /// An attachment's bytes.
    public func attachment(of id: String, named name: String) throws -> Data? {
        try database.read { db in
            try Data.fetchOne(
                db, sql: "SELECT bytes FROM attachment WHERE noteID = ? AND name = ?",
                arguments: [try Self.resolve(id, db), name])
        }
    }

    /// The note whose ID is `id` or starts with it (as `git` takes a short hash).
    public func resolve(_ id: String) throws -> String {
        try database.read { db in try Self.resolve(id, db) }
    }

    static func resolve(_ id: String, _ db: GRDB.Database) throws -> String {
        let matches = try String.fetchAll(
            db, sql: "SELECT id FROM note WHERE id = ? OR id LIKE ? ESCAPE '\\' LIMIT 2",
            arguments: [
                id, id.replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%",
            ])
        guard matches.count == 1 else {
            throw NotebookError(
                matches.isEmpty
                    ? "no note has the ID \(id); `notes list` shows them"
                    : "more than one note's ID starts with \(id); give more of it")
        }
        return matches[0]
    }

    /// The same tag everywhere: its ID is its name, so two devices tagging "home" make one tag.
    private static func tag(_ note: String, with name: String, _ db: GRDB.Database) throws {
        let tagID = "tag:" + name.lowercased()
        try db.execute(
            sql: "INSERT INTO tag (id, name) VALUES (?, ?) ON CONFLICT DO NOTHING", arguments: [tagID, name])
        try db.execute(
            sql: "INSERT INTO noteTag (id, noteID, tagID) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            arguments: ["\(note):\(tagID)", note, tagID])
    }

    private static func now() -> String { ISO8601DateFormatter().string(from: Date()) }
}

/// Something the notebook cannot do, saying why.
public struct NotebookError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
