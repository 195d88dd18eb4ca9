import Foundation
import GRDB
import SyncKit
import SyncTables
import SyncTesting
import TestTraits
import Testing

/// One row edited on two devices before either saw the other's edit, under each table policy: what
/// each device shows after, and what the conflict log kept.
@Suite(.onEveryBackend)
struct ConflictTests {
    /// Two devices of one account with note `n1` ("one\ntwo\nthree") on both.
    private func pair(_ server: TestServer, policy: ConflictPolicy) async throws -> (NotesDevice, NotesDevice) {
        let tables = NotesDevice.tables(note: policy)
        let a = try NotesDevice("a", username: "ada", server: server, tables: tables)
        let b = try NotesDevice("b", username: "ada", server: server, tables: tables)
        try a.execute("INSERT INTO note (id, title, body) VALUES ('n1', 'Plan', 'one\ntwo\nthree')")
        try await a.sync.sync()
        try await b.sync.sync()
        return (a, b)
    }

    @Test("edits to different columns of one row both survive")
    func differentColumns() async throws {
        try await TestServer.with { server in
            let (a, b) = try await pair(server, policy: .lastEditPerField)
            try a.execute("UPDATE note SET title = 'Plan B' WHERE id = 'n1'")
            try b.execute("UPDATE note SET pinned = 1 WHERE id = 'n1'")
            try await a.sync.sync()
            try await b.sync.sync()
            try await a.sync.sync()
            for device in [a, b] {
                #expect(try device.string("SELECT title || '/' || pinned FROM note") == "Plan B/1", "\(device.name)")
            }
            #expect(try b.sync.conflictLog().isEmpty)
            await a.stop()
            await b.stop()
        }
    }

    @Test("the later edit of a column wins, by the server's clock, and the other is in the conflict log")
    func lastEditWins() async throws {
        try await TestServer.with { server in
            let (a, b) = try await pair(server, policy: .lastEditPerField)
            // A's edit reaches the server before B edits: B's is later and wins.
            try a.execute("UPDATE note SET title = 'from a' WHERE id = 'n1'")
            try await a.sync.sync()
            try b.execute("UPDATE note SET title = 'from b' WHERE id = 'n1'")
            try await b.sync.sync()
            try await a.sync.sync()
            #expect(try a.string("SELECT title FROM note") == "from b")
            #expect(try b.string("SELECT title FROM note") == "from b")
            let kept = try b.sync.conflictLog()
            #expect(kept.map(\.lost) == ["from a".databaseValue])
            #expect(kept.map(\.lostFrom) == ["server"])

            // B edits first, A edits and saves after: A's is later and wins, B's is kept in B's log.
            try b.execute("UPDATE note SET title = 'early b' WHERE id = 'n1'")
            try a.execute("UPDATE note SET title = 'late a' WHERE id = 'n1'")
            try await a.sync.sync()
            try await b.sync.sync()
            #expect(try b.string("SELECT title FROM note") == "late a")
            #expect(
                try b.sync.conflictLog().last.map { [$0.lost, $0.kept] } == [
                    "early b".databaseValue, "late a".databaseValue,
                ])
            #expect(try b.sync.conflictLog().last?.lostFrom == "device")
            #expect(try b.sync.pendingChanges().isEmpty)
            await a.stop()
            await b.stop()
        }
    }

    @Test("a three-way merge keeps both devices' edits to different lines of one text")
    func threeWayMerge() async throws {
        try await TestServer.with { server in
            let (a, b) = try await pair(server, policy: .threeWayMerge)
            try a.execute("UPDATE note SET body = 'ONE\ntwo\nthree' WHERE id = 'n1'")
            try b.execute("UPDATE note SET body = 'one\ntwo\nTHREE' WHERE id = 'n1'")
            try await a.sync.sync()
            try await b.sync.sync()
            try await a.sync.sync()
            #expect(try a.string("SELECT body FROM note") == "ONE\ntwo\nTHREE")
            #expect(try b.string("SELECT body FROM note") == "ONE\ntwo\nTHREE")
            #expect(try b.sync.conflictLog().map(\.lost).contains("one\ntwo\nTHREE".databaseValue))
            await a.stop()
            await b.stop()
        }
    }

    @Test("an app's own merge decides, given the ancestor, its row and the server's")
    func customMerge() async throws {
        try await TestServer.with { server in
            let joined = ConflictResolver("joinTitles") { conflict in
                var row = conflict.client
                let mine = conflict.client["title"].flatMap(String.fromDatabaseValue) ?? ""
                let theirs = conflict.server["title"].flatMap(String.fromDatabaseValue) ?? ""
                let base = conflict.ancestor?["title"].flatMap(String.fromDatabaseValue) ?? "?"
                row["title"] = "\(base): \(theirs) + \(mine)".databaseValue
                return row
            }
            let (a, b) = try await pair(server, policy: .custom(joined))
            try a.execute("UPDATE note SET title = 'x' WHERE id = 'n1'")
            try b.execute("UPDATE note SET title = 'y' WHERE id = 'n1'")
            try await a.sync.sync()
            try await b.sync.sync()
            try await a.sync.sync()
            #expect(try a.string("SELECT title FROM note") == "Plan: x + y")
            #expect(try b.string("SELECT title FROM note") == "Plan: x + y")
            #expect(try b.sync.conflictLog().allSatisfy { $0.policy == "custom(joinTitles)" })
            await a.stop()
            await b.stop()
        }
    }
}
