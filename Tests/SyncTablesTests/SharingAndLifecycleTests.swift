import Foundation
import GRDB
import SyncKit
import SyncTables
import SyncTesting
import Synchronization
import TestTraits
import Testing

/// Sharing a row with its children between two people, and starting over.
@Suite(.onEveryBackend)
struct SharingAndLifecycleTests {
    @Test("a note shared read-write arrives with its comments; the other person's edits and new comments come back")
    func shareReadWrite() async throws {
        try await TestServer.with { server in
            let ada = try NotesDevice("ada", username: "ada", server: server)
            let bob = try NotesDevice("bob", username: "bob", server: server)
            try await bob.sync.sync()  // Bob's account and key exist.
            try await ada.database.write { db in
                try db.execute(sql: "INSERT INTO note (id, title, body) VALUES ('n1', 'Trip', 'secret plan')")
                try db.execute(sql: "INSERT INTO comment (id, noteID, text) VALUES ('c1', 'n1', 'book hotel')")
                try db.execute(sql: "INSERT INTO note (id, title) VALUES ('n2', 'Private')")
            }
            try await ada.sync.sync()
            let invitation = try await ada.sync.share("note", key: "n1", with: ["bob"], permission: .readWrite)
            try await bob.sync.acceptShare(invitation)
            try await bob.sync.sync()
            #expect(try bob.strings("SELECT id FROM note") == ["n1"])
            #expect(try bob.string("SELECT body FROM note") == "secret plan")
            #expect(try bob.string("SELECT text FROM comment WHERE noteID = 'n1'") == "book hotel")

            try await bob.database.write { db in
                try db.execute(sql: "UPDATE note SET title = 'Trip to Rome' WHERE id = 'n1'")
                try db.execute(sql: "INSERT INTO comment (id, noteID, text) VALUES ('c2', 'n1', 'and flights')")
            }
            try await bob.sync.sync()
            #expect(try bob.sync.pendingChanges().isEmpty)
            try await ada.sync.sync()
            #expect(try ada.string("SELECT title FROM note WHERE id = 'n1'") == "Trip to Rome")
            #expect(try ada.strings("SELECT text FROM comment ORDER BY id") == ["book hotel", "and flights"])
            await ada.stop()
            await bob.stop()
        }
    }

    @Test("a write to a row shared read-only is refused locally, before it is queued")
    func readOnlyRefusedLocally() async throws {
        try await TestServer.with { server in
            let ada = try NotesDevice("ada", username: "ada", server: server)
            let bob = try NotesDevice("bob", username: "bob", server: server)
            try await bob.sync.sync()
            try ada.execute("INSERT INTO note (id, title) VALUES ('n1', 'Rules')")
            try await ada.sync.sync()
            let invitation = try await ada.sync.share("note", key: "n1", with: ["bob"], permission: .readOnly)
            try await bob.sync.acceptShare(invitation)
            try await bob.sync.sync()
            #expect(try bob.string("SELECT title FROM note") == "Rules")
            for statement in [
                "UPDATE note SET title = 'Mine' WHERE id = 'n1'", "DELETE FROM note WHERE id = 'n1'",
                "INSERT INTO comment (id, noteID, text) VALUES ('c1', 'n1', 'hi')",
            ] {
                let error = #expect(throws: DatabaseError.self) { try bob.execute(statement) }
                #expect(error?.message?.contains("read-only") == true, "\(statement)")
            }
            #expect(try bob.string("SELECT title FROM note") == "Rules")
            #expect(try bob.sync.pendingChanges().isEmpty)
            await ada.stop()
            await bob.stop()
        }
    }

    @Test(
        "deleting local data keeps the server's, and a start fetches it back; a resync keeps local rows and uploads them"
    )
    func startingOver() async throws {
        try await TestServer.with { server in
            let a = try NotesDevice("a", username: "ada", server: server)
            try a.execute("INSERT INTO note (id, title) VALUES ('n1', 'Kept on the server')")
            try await a.sync.sync()
            try await a.sync.deleteLocalData()
            #expect(try a.count("note") == 0)
            try a.sync.start()
            try await a.sync.sync()
            #expect(try a.string("SELECT title FROM note") == "Kept on the server")

            // Rows written while the layer's records of them were lost (a restored backup, say).
            try await a.database.write { db in
                try db.execute(sql: "INSERT INTO note (id, title) VALUES ('n2', 'Only here')")
                try db.execute(sql: "DELETE FROM synctables_pending")
                try db.execute(sql: "DELETE FROM synctables_changes")
            }
            try await a.sync.resync()
            #expect(try a.count("note") == 2)
            let b = try NotesDevice("b", username: "ada", server: server)
            try await b.sync.sync()
            #expect(try b.strings("SELECT title FROM note ORDER BY id") == ["Kept on the server", "Only here"])
            await a.stop()
            await b.stop()
        }
    }

    @Test("before the rows of a zone deleted elsewhere go, the app hears which and how many")
    func zoneRemovalHook() async throws {
        try await TestServer.with { server in
            let heard = Mutex<[TableSync.RemovedZone]>([])
            var configuration = TableSync.Configuration.testing
            configuration.willRemoveZone = { zone in
                heard.withLock { $0.append(zone) }
                return true
            }
            let a = try NotesDevice("a", username: "ada", server: server, configuration: configuration)
            try await a.database.write { db in
                try db.execute(sql: "INSERT INTO note (id, title) VALUES ('n1', 'One')")
                try db.execute(sql: "INSERT INTO comment (id, noteID, text) VALUES ('c1', 'n1', 'x')")
            }
            try await a.sync.sync()
            let raw = try await TestClient(baseURL: server.baseURL).signedIn(
                username: "ada", password: "password of ada")
            _ = try await raw.modifyZones(ModifyZonesRequest(saves: [], deletes: [RecordZone.ID(zoneName: "Tables")]))
            try await a.sync.sync()
            #expect(heard.withLock { $0.map(\.rowCounts) } == [["note": 1, "comment": 1]])
            #expect(try a.count("note") == 0)
            // The zone is made again for what comes next.
            try a.execute("INSERT INTO note (id, title) VALUES ('n2', 'After')")
            try await a.sync.sync()
            #expect(try a.sync.pendingChanges().isEmpty)
            await a.stop()
        }
    }
}
