import Foundation
import GRDB
import SyncKit
import SyncTables
import SyncTesting
import TestTraits
import Testing

/// Devices on different versions of an app's schema, and declarations that cannot sync.
@Suite(.onEveryBackend)
struct SchemaEvolutionTests {
    @Test("records of a table this version lacks wait, and are written after the migration that adds it")
    func futureTable() async throws {
        try await TestServer.with { server in
            let folder = "CREATE TABLE folder (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL)"
            let newer = try NotesDevice(
                "newer", username: "ada", server: server, tables: NotesDevice.tables() + [SyncedTable("folder")],
                schema: NotesDevice.schema + [folder])
            let older = try NotesDevice("older", username: "ada", server: server)
            try newer.execute("INSERT INTO folder (id, name) VALUES ('f1', 'Work')")
            try newer.execute("INSERT INTO note (id, title) VALUES ('n1', 'Memo')")
            try await newer.sync.sync()
            try await older.sync.sync()
            #expect(try older.count("note") == 1)
            let waiting = try older.sync.unappliedRecords()
            #expect(waiting.map(\.recordID.recordName) == ["f1"])
            #expect(waiting.first?.reason.contains("no table for folder") == true)

            // The app upgrades: its migration adds the table, and it declares it.
            await older.stop()
            let upgraded = try NotesDevice(
                "older", username: "ada", server: server, path: older.path,
                tables: NotesDevice.tables() + [SyncedTable("folder")], schema: NotesDevice.schema + [folder])
            #expect(try upgraded.string("SELECT name FROM folder WHERE id = 'f1'") == "Work")
            #expect(try upgraded.sync.unappliedRecords().isEmpty)
            #expect(try upgraded.sync.pendingChanges().isEmpty)
            await newer.stop()
            await upgraded.stop()
        }
    }

    @Test("a column only a newer version has survives an older device's edit of the row")
    func addedColumn() async throws {
        try await TestServer.with { server in
            var schema = NotesDevice.schema
            schema[0] = schema[0].replacingOccurrences(of: "pinned INTEGER", with: "color TEXT, pinned INTEGER")
            let newer = try NotesDevice("newer", username: "ada", server: server, schema: schema)
            let older = try NotesDevice("older", username: "ada", server: server)
            try newer.execute("INSERT INTO note (id, title, color) VALUES ('n1', 'Memo', 'red')")
            try await newer.sync.sync()
            try await older.sync.sync()
            try older.execute("UPDATE note SET title = 'Memo 2' WHERE id = 'n1'")
            try await older.sync.sync()
            try await newer.sync.sync()
            #expect(try newer.string("SELECT title || ' ' || color FROM note") == "Memo 2 red")
            await newer.stop()
            await older.stop()
        }
    }

    @Test("a synced column removed or renamed is refused at start, saying why; an integer key too")
    func refusedSchemas() async throws {
        try await TestServer.with { server in
            let device = try NotesDevice("a", username: "ada", server: server)
            await device.stop()
            try device.execute("ALTER TABLE note RENAME COLUMN pinned TO starred")
            let error = #expect(throws: TableSyncError.self) {
                try TableSync(
                    database: device.database, tables: NotesDevice.tables(),
                    container: NotesDevice.container("ada", server))
            }
            #expect("\(error!)".contains("note no longer has pinned"))
            #expect("\(error!)".contains("a rename is a removal"))

            let plain = try DatabaseQueue()
            try await plain.write { db in try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT)") }
            let keyError = #expect(throws: TableSyncError.self) {
                try TableSync(
                    database: plain, tables: [SyncedTable("item")], container: NotesDevice.container("ada", server))
            }
            #expect("\(keyError!)".contains("item's primary key id is INTEGER"))
            let missing = #expect(throws: TableSyncError.self) {
                try TableSync(
                    database: plain, tables: [SyncedTable("nothing")], container: NotesDevice.container("ada", server))
            }
            #expect("\(missing!)".contains("the database has no such table"))
        }
    }

    @Test("a child that arrives before its parent waits for it, then is written")
    func orphanWaitsForParent() async throws {
        try await TestServer.with { server in
            let a = try NotesDevice("a", username: "ada", server: server)
            try await a.sync.sync()  // the zone
            // Another client of the account saves the comment before its note.
            let raw = try await TestClient(baseURL: server.baseURL).signedIn(
                username: "ada", password: "password of ada")
            let zone = RecordZone.ID(zoneName: "Tables")
            var comment = RecordValue(recordType: "comment", recordID: .init(recordName: "c1", zoneID: zone))
            comment["noteID"] = .reference(.init(recordID: .init(recordName: "n1", zoneID: zone), action: .deleteSelf))
            comment["text"] = "first!"
            _ = try await raw.modifyRecords(ModifyRecordsRequest(saves: [comment]))
            try await a.sync.sync()
            #expect(try a.count("comment") == 0)
            #expect(try a.sync.unappliedRecords().first?.reason.contains("noteID n1 in note has not arrived") == true)

            var note = RecordValue(recordType: "note", recordID: .init(recordName: "n1", zoneID: zone))
            note["title"] = "Late parent"
            _ = try await raw.modifyRecords(ModifyRecordsRequest(saves: [note]))
            try await a.sync.sync()
            #expect(try a.string("SELECT text FROM comment WHERE noteID = 'n1'") == "first!")
            #expect(try a.string("SELECT title FROM note") == "Late parent")
            #expect(try a.sync.unappliedRecords().isEmpty)
            await a.stop()
        }
    }
}
