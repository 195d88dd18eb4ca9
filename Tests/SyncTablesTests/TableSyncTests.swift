import Foundation
import GRDB
import SyncKit
import SyncTables
import SyncTesting
import TestTraits
import Testing

/// Two and three devices of one account syncing the notes schema through the real server, on every
/// backend: what a person using two machines would check.
@Suite(.onEveryBackend)
struct TableSyncTests {
    @Test(
        "rows inserted, updated and deleted on one device reach the others; a child made in its parent's transaction too"
    )
    func insertUpdateDelete() async throws {
        try await TestServer.with { server in
            let a = try NotesDevice("a", username: "ada", server: server)
            let b = try NotesDevice("b", username: "ada", server: server)
            let c = try NotesDevice("c", username: "ada", server: server)
            // One transaction: the tag and the link are made with the note (sqlite-data #424).
            try await a.database.write { db in
                try db.execute(sql: "INSERT INTO note (id, title, body) VALUES ('n1', 'Groceries', 'milk\neggs')")
                try db.execute(sql: "INSERT INTO tag (id, name) VALUES ('t1', 'home')")
                try db.execute(sql: "INSERT INTO noteTag (id, noteID, tagID) VALUES ('l1', 'n1', 't1')")
            }
            #expect(try a.sync.pendingChanges().map(\.recordName).sorted() == ["l1", "n1", "t1"])
            try await a.sync.sync()
            #expect(try a.sync.pendingChanges().isEmpty)
            try await b.sync.sync()
            try await c.sync.sync()
            for device in [b, c] {
                #expect(try device.string("SELECT body FROM note WHERE id = 'n1'") == "milk\neggs", "\(device.name)")
                #expect(try device.string("SELECT tagID FROM noteTag WHERE noteID = 'n1'") == "t1", "\(device.name)")
                // Written back without being queued again.
                #expect(try device.sync.pendingChanges().isEmpty, "\(device.name)")
            }

            try b.execute("UPDATE note SET title = 'Shopping' WHERE id = 'n1'")
            try await b.sync.sync()
            try await a.sync.sync()
            try await c.sync.sync()
            #expect(try a.string("SELECT title FROM note WHERE id = 'n1'") == "Shopping")
            #expect(try c.string("SELECT title FROM note WHERE id = 'n1'") == "Shopping")

            // Deleting the tag cascades to the link here, and on the other devices.
            try c.execute("DELETE FROM tag WHERE id = 't1'")
            #expect(try c.count("noteTag") == 0)
            try await c.sync.sync()
            try await a.sync.sync()
            try await b.sync.sync()
            for device in [a, b] {
                #expect(try device.count("tag") == 0, "\(device.name)")
                #expect(try device.count("noteTag") == 0, "\(device.name)")
                #expect(try device.count("note") == 1, "\(device.name)")
            }
            for device in [a, b, c] { await device.stop() }
        }
    }

    @Test("a parent deleted on one device leaves its ON DELETE SET NULL children on every device, unlinked")
    func setNullAcrossDevices() async throws {
        try await TestServer.with { server in
            let schema = [
                "CREATE TABLE folder (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL)",
                """
                CREATE TABLE item (id TEXT PRIMARY KEY NOT NULL,
                    folderID TEXT REFERENCES folder(id) ON DELETE SET NULL, text TEXT NOT NULL)
                """,
            ]
            let tables = [SyncedTable("folder"), SyncedTable("item")]
            let a = try NotesDevice("a", username: "ada", server: server, tables: tables, schema: schema)
            let b = try NotesDevice("b", username: "ada", server: server, tables: tables, schema: schema)
            try await a.database.write { db in
                try db.execute(sql: "INSERT INTO folder (id, name) VALUES ('f1', 'Inbox')")
                try db.execute(sql: "INSERT INTO item (id, folderID, text) VALUES ('i1', 'f1', 'keep me')")
            }
            try await a.sync.sync()
            try await b.sync.sync()
            #expect(try b.string("SELECT folderID FROM item") == "f1")
            try b.execute("DELETE FROM folder WHERE id = 'f1'")
            try await b.sync.sync()
            try await a.sync.sync()
            for device in [a, b] {
                #expect(try device.count("folder") == 0, "\(device.name)")
                #expect(
                    try device.strings("SELECT text || '/' || IFNULL(folderID, 'none') FROM item") == ["keep me/none"])
                #expect(try device.sync.pendingChanges().isEmpty, "\(device.name)")
            }
            await a.stop()
            await b.stop()
        }
    }

    @Test("more rows than one request holds go in as many batches, parents before children")
    func manyBatches() async throws {
        try await TestServer.with { server in
            let a = try NotesDevice("a", username: "ada", server: server)
            let b = try NotesDevice("b", username: "ada", server: server)
            try await a.database.write { db in
                // Children first in the transaction: the layer still sends their parents first.
                try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
                for index in 0..<400 {
                    try db.execute(
                        sql: "INSERT INTO comment (id, noteID, text) VALUES (?, ?, 'c')",
                        arguments: ["c\(index)", "n\(index)"])
                }
                for index in 0..<400 {
                    try db.execute(sql: "INSERT INTO note (id, title) VALUES (?, 'n')", arguments: ["n\(index)"])
                }
            }
            try await a.sync.sendChanges()
            #expect(try a.sync.pendingChanges().isEmpty)
            try await b.sync.sync()
            #expect(try b.count("note") == 400)
            #expect(try b.count("comment") == 400)
            #expect(try b.sync.unappliedRecords().isEmpty)
            await a.stop()
            await b.stop()
        }
    }

    @Test("a note deleted on one device takes its comments and links with it everywhere")
    func cascadeAcrossDevices() async throws {
        try await TestServer.with { server in
            let a = try NotesDevice("a", username: "ada", server: server)
            let b = try NotesDevice("b", username: "ada", server: server)
            try await a.database.write { db in
                try db.execute(sql: "INSERT INTO note (id, title) VALUES ('n1', 'Trip')")
                try db.execute(sql: "INSERT INTO comment (id, noteID, text) VALUES ('c1', 'n1', 'book hotel')")
                try db.execute(sql: "INSERT INTO tag (id, name) VALUES ('t1', 'travel')")
                try db.execute(sql: "INSERT INTO noteTag (id, noteID, tagID) VALUES ('l1', 'n1', 't1')")
            }
            try await a.sync.sync()
            // The foreign key's ON DELETE CASCADE is a deleteSelf reference, which the server performs.
            let raw = try await TestClient(baseURL: server.baseURL).signedIn(
                username: "ada", password: "password of ada")
            let zone = RecordZone.ID(zoneName: "Tables")
            let stored = try await raw.lookupRecords([.init(recordName: "c1", zoneID: zone)])
            #expect(stored.records.first?["noteID"]?.referenceValue?.action == .deleteSelf)
            // The metadata keeps the server's record as it is: its system fields read back equal.
            let kept = try #require(
                try await a.database.read { db in
                    try Data.fetchOne(db, sql: "SELECT systemFields FROM synctables_metadata WHERE recordName = 'c1'")
                })
            let system = try JSONDecoder().decode(RecordValue.SystemFields.self, from: kept)
            let server = try #require(stored.records.first)
            #expect(system.recordChangeTag == server.recordChangeTag)
            #expect(system.modificationDate == server.modificationDate)
            #expect(system.creationDate == server.creationDate)
            #expect(system.recordID == server.recordID && system.recordType == "comment")
            #expect(system.parent?.recordID.recordName == "n1")
            try await b.sync.sync()
            #expect(try b.count("comment") == 1)
            try b.execute("DELETE FROM note WHERE id = 'n1'")
            try await b.sync.sync()
            try await a.sync.sync()
            #expect(try a.count("note") == 0)
            #expect(try a.count("comment") == 0)
            #expect(try a.count("noteTag") == 0)
            #expect(try a.count("tag") == 1)
            #expect(try a.sync.pendingChanges().isEmpty)
            await a.stop()
            await b.stop()
        }
    }

    @Test("a row written through another connection (another process, the sqlite3 shell) is sent all the same")
    func writeFromAnotherConnection() async throws {
        try await TestServer.with { server in
            let a = try NotesDevice("a", username: "ada", server: server)
            let b = try NotesDevice("b", username: "ada", server: server)
            try a.execute("INSERT INTO note (id, title) VALUES ('n1', 'from the app')")
            // SQLite's clock (`julianday('now')`) keeps milliseconds: the earliest time the triggers can write is
            // this moment cut to its millisecond, less the Julian day's rounding.
            let now = Date().timeIntervalSince1970
            let before = Date(timeIntervalSince1970: (now * 1000).rounded(.down) / 1000 - 0.0001)
            // A connection the layer does not watch: its triggers capture the write all the same, which takes
            // the time the layer first sees it.
            // As a second process would, it waits for the layer's own reads rather than fail at once.
            var waits = GRDB.Configuration()
            waits.busyMode = .timeout(60)
            let other = try DatabaseQueue(path: a.path, configuration: waits)
            try await other.write { db in
                try db.execute(sql: "INSERT INTO note (id, title) VALUES ('n2', 'from the shell')")
                try db.execute(sql: "UPDATE note SET title = 'edited in the shell' WHERE id = 'n1'")
            }
            try other.close()
            let pending = try a.sync.pendingChanges()
            #expect(pending.map(\.recordName).sorted() == ["n1", "n2"])
            #expect(pending.allSatisfy { $0.changedAt >= before })
            try await a.sync.sync()
            try await b.sync.sync()
            #expect(try b.strings("SELECT title FROM note ORDER BY id") == ["edited in the shell", "from the shell"])
            #expect(try a.sync.pendingChanges().isEmpty)
            await a.stop()
            await b.stop()
        }
    }

    @Test("with automatic sync, a row written on one device appears on the other with no call to sync")
    func automaticSync() async throws {
        try await TestServer.with { server in
            var automatic = TableSync.Configuration()
            automatic.automaticallySync = true
            // A busy machine (the suite's own load) must not hold the debounced send back.
            automatic.schedulerProbes = []
            let a = try NotesDevice("a", username: "ada", server: server, configuration: automatic)
            let b = try NotesDevice("b", username: "ada", server: server, configuration: automatic)
            try a.execute("INSERT INTO note (id, title) VALUES ('n1', 'Pushed')")
            // Generous: both devices sign in, make the account's keys and sync once first, on a busy machine.
            try await waitUntil("device b has the note", timeout: .seconds(300)) {
                try b.string("SELECT title FROM note WHERE id = 'n1'") == "Pushed"
            } observed: {
                "a: \(a.sync.status), b: \(b.sync.status)"
            }
            try b.execute("UPDATE note SET title = 'Pushed back' WHERE id = 'n1'")
            try await waitUntil("device a has b's edit", timeout: .seconds(300)) {
                try a.string("SELECT title FROM note WHERE id = 'n1'") == "Pushed back"
            } observed: {
                "a: \(a.sync.status), b: \(b.sync.status)"
            }
            await a.stop()
            await b.stop()
        }
    }

    @Test("a BLOB over the threshold travels as an asset; an encrypted column never reaches the server in plain")
    func assetsAndEncryption() async throws {
        try await TestServer.with { server in
            let a = try NotesDevice("a", username: "ada", server: server)
            let b = try NotesDevice("b", username: "ada", server: server)
            let picture = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            try a.execute(
                "INSERT INTO note (id, title, body, attachment) VALUES ('n1', 'Scan', 'secret diary words', ?)",
                [picture])
            try await a.sync.sync()
            try await b.sync.sync()
            let received = try await b.database.read { db in
                try Data.fetchOne(db, sql: "SELECT attachment FROM note WHERE id = 'n1'")
            }
            #expect(received == picture)
            #expect(try b.string("SELECT body FROM note WHERE id = 'n1'") == "secret diary words")
            let stored = try await server.storedBytes()
            #expect(stored.range(of: Data("secret diary words".utf8)) == nil)
            #expect(stored.range(of: Data("Scan".utf8)) != nil)
            await a.stop()
            await b.stop()
        }
    }
}
