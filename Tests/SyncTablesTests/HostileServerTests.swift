import Foundation
import GRDB
import SyncKit
import SyncTables
import SyncTesting
import TestTraits
import Testing

/// What a server (or another client of the account) sends that a device must not take as data.
@Suite(.onEveryBackend)
struct HostileServerTests {
    @Test("a plain value where an encrypted column's sealed one belongs is refused, and the row keeps its value")
    func plainValueForEncryptedColumn() async throws {
        try await TestServer.with { server in
            let a = try NotesDevice("a", username: "ada", server: server)
            try a.execute("INSERT INTO note (id, title, body) VALUES ('n1', 'Diary', 'my own words')")
            try await a.sync.sync()
            let raw = try await TestClient(baseURL: server.baseURL).signedIn(
                username: "ada", password: "password of ada")
            let zone = RecordZone.ID(zoneName: "Tables")
            let stored = try #require(
                try await raw.lookupRecords([.init(recordName: "n1", zoneID: zone)]).records.first)
            var forged = stored
            forged.replaceWithoutChange(field: "body", by: "words the server chose")
            _ = try await raw.modifyRecords(ModifyRecordsRequest(saves: [forged]))
            try await a.sync.fetchChanges()
            #expect(try a.string("SELECT body FROM note") == "my own words")
            #expect(a.sync.status.lastError?.contains("refused") == true, "\(a.sync.status.lastError ?? "no error")")
            await a.stop()
        }
    }

    @Test("a record its table's constraints refuse waits, saying why, and the rest of the page is written")
    func constraintRefused() async throws {
        try await TestServer.with { server in
            let a = try NotesDevice("a", username: "ada", server: server)
            try await a.sync.sync()
            let raw = try await TestClient(baseURL: server.baseURL).signedIn(
                username: "ada", password: "password of ada")
            let zone = RecordZone.ID(zoneName: "Tables")
            var broken = RecordValue(recordType: "tag", recordID: .init(recordName: "t1", zoneID: zone))
            broken["name"] = .int64(1)
            broken.replaceWithoutChange(field: "name", by: nil)  // a tag without its NOT NULL name
            var fine = RecordValue(recordType: "tag", recordID: .init(recordName: "t2", zoneID: zone))
            fine["name"] = "work"
            _ = try await raw.modifyRecords(ModifyRecordsRequest(saves: [broken, fine]))
            try await a.sync.fetchChanges()
            #expect(try a.strings("SELECT name FROM tag") == ["work"])
            let waiting = try a.sync.unappliedRecords()
            #expect(waiting.map(\.recordID.recordName) == ["t1"])
            #expect(waiting.first?.reason.contains("NOT NULL") == true, "\(waiting)")
            await a.stop()
        }
    }
}
