import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

@Suite("Fetching changes", .onEveryBackend)
struct ChangeFetchTests {
    @Test("paging through 1,000+ changes with a small limit yields each change exactly once")
    func pagingYieldsEachChangeOnce() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            var saved: [RecordValue] = []
            for batch in 0..<3 {
                saved += try await ada.save((0..<400).map { contact("c\(batch * 400 + $0)") })
            }
            // Interleave updates and deletes so that a record's latest change moves to the end.
            var updated = Array(saved[0..<50])
            for index in updated.indices { updated[index]["name"] = .string("updated \(index)") }
            try await ada.save(updated)
            _ = try await ada.modifyRecords(ModifyRecordsRequest(deletes: saved[50..<80].map(\.recordID)))

            var token: ServerChangeToken?
            var seen: [String] = []
            var deleted: [String] = []
            var pages = 0
            repeat {
                let page = try await ada.fetchZoneChanges(contactsZone, since: token, resultsLimit: 37)
                #expect(page.modifications.count + page.deletions.count <= 37)
                seen += page.modifications.map(\.recordID.recordName)
                deleted += page.deletions.map(\.recordID.recordName)
                token = page.changeToken
                pages += 1
                if !page.moreComing { break }
            } while true
            #expect(pages >= 1170 / 37)
            #expect(seen.count == Set(seen).count, "a record came twice")
            #expect(Set(seen) == Set((80..<1200).map { "c\($0)" } + (0..<50).map { "c\($0)" }))
            #expect(Set(deleted) == Set((50..<80).map { "c\($0)" }))
            #expect(deleted.count == 30)

            // Fetching from the last token finds nothing new; a new change appears alone.
            let idle = try await ada.fetchZoneChanges(contactsZone, since: token)
            #expect(idle.modifications.isEmpty && idle.deletions.isEmpty && !idle.moreComing)
            try await ada.save([contact("late")])
            let late = try await ada.fetchZoneChanges(contactsZone, since: token)
            #expect(late.modifications.map(\.recordID.recordName) == ["late"])
        }
    }

    @Test("database changes page through zones, and a deleted zone appears with reason deleted")
    func databaseChanges() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let names = (0..<25).map { "Zone\($0)" }
            _ = try await ada.modifyZones(ModifyZonesRequest(saves: names.map(RecordZone.init(zoneName:))))
            var token: ServerChangeToken?
            var zones: [String] = []
            while true {
                let page = try await ada.fetchDatabaseChanges(since: token, resultsLimit: 4)
                zones += page.modifications.map(\.zoneName)
                token = page.changeToken
                if !page.moreComing { break }
            }
            #expect(zones.sorted() == names.sorted())

            let zone = RecordZone.ID(zoneName: "Zone3")
            try await ada.save([contact("Ada", zone: zone)])
            _ = try await ada.modifyZones(ModifyZonesRequest(deletes: [zone]))
            let changes = try await ada.fetchDatabaseChanges(since: token)
            #expect(changes.modifications.isEmpty)
            #expect(changes.deletions == [.init(zoneID: zone, reason: .deleted)])
            #expect(await syncError { _ = try await ada.fetchZoneChanges(zone) }?.code == .zoneNotFound)
            #expect(try await ada.listZones().count == 24)
        }
    }

    @Test("a token from another zone or another user is refused; one older than compacted history expires")
    func tokenValidity() async throws {
        try await withServer { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let bob = try await anonymous.signedUp(username: "bob")
            try await ada.saveZones("Contacts", "Other")
            try await bob.saveZones("Contacts")
            let adaToken = try await ada.fetchZoneChanges(contactsZone).changeToken

            let wrongZone = await syncError {
                _ = try await ada.fetchZoneChanges(RecordZone.ID(zoneName: "Other"), since: adaToken)
            }
            #expect(wrongZone?.code == .invalidArguments)
            let wrongUser = await syncError { _ = try await bob.fetchZoneChanges(contactsZone, since: adaToken) }
            #expect(wrongUser?.code == .invalidArguments)
            let dbTokenAsZoneToken = await syncError {
                _ = try await ada.fetchZoneChanges(
                    contactsZone, since: try await ada.fetchDatabaseChanges().changeToken)
            }
            #expect(dbTokenAsZoneToken?.code == .invalidArguments)
            let garbage = try await ada.send(
                .post, "/v1/databases/private/records/changes",
                body: Data(json: #"{"zoneID":{"zoneName":"Contacts"},"since":"bm90IGEgdG9rZW4="}"#))
            // Not signed by this server: expired, so that a client fetches from the start.
            #expect(garbage.status == 410)
            #expect(String(decoding: garbage.body, as: UTF8.self).contains(#""reason":"changeTokenInvalid""#))

            // Delete a record, compact its tombstone away: the old token can no longer see the delete.
            let saved = try await ada.save([contact("Grace")])
            let beforeDelete = try await ada.fetchZoneChanges(contactsZone).changeToken
            _ = try await ada.modifyRecords(ModifyRecordsRequest(deletes: [saved[0].recordID]))
            let removed = try await server.store.compactHistory(
                tombstonesBefore: Date().addingTimeInterval(60), requestsBefore: Date())
            #expect(removed == 1)
            let expired = try await ada.send(
                .post, "/v1/databases/private/records/changes",
                body: try JSONEncoder().encode(FetchZoneChangesRequest(zoneID: contactsZone, since: beforeDelete)))
            #expect(expired.status == 410)
            #expect(expired.error?.code == .changeTokenExpired)
            // Starting over works.
            #expect(try await ada.fetchZoneChanges(contactsZone).modifications.isEmpty)
        }
    }

    @Test("a zone deleted and created again makes its old tokens expire")
    func recreatedZoneExpiresTokens() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            try await ada.save([contact("Grace")])
            let token = try await ada.fetchZoneChanges(contactsZone).changeToken
            _ = try await ada.modifyZones(ModifyZonesRequest(deletes: [contactsZone]))
            try await ada.saveZones("Contacts")
            let error = await syncError { _ = try await ada.fetchZoneChanges(contactsZone, since: token) }
            #expect(error?.code == .changeTokenExpired)
            #expect(try await ada.contents().isEmpty)
        }
    }

    @Test("after a server restart all data is there and old tokens still work")
    func restartKeepsDataAndTokens() async throws {
        let path = TemporaryFiles.path("restart", extension: "sqlite")
        defer { TemporaryFiles.removeSQLite(path) }
        let first = try await TestServer.start(storagePath: path, transport: .inProcess)
        let ada = try await TestClient(baseURL: first.baseURL).signedUp(username: "ada")
        try await ada.saveZones("Contacts")
        let saved = try await ada.save((0..<10).map { contact("c\($0)") })
        let zoneToken = try await ada.fetchZoneChanges(contactsZone).changeToken
        let databaseToken = try await ada.fetchDatabaseChanges().changeToken
        try await first.stop()

        let second = try await TestServer.start(storagePath: path, transport: .inProcess)
        var again = ada
        again.baseURL = second.baseURL
        #expect(try await again.account().username == "ada", "the session survives the restart")
        #expect(
            try await again.contents().values.sorted { $0.recordID < $1.recordID }
                == saved.sorted { $0.recordID < $1.recordID })
        var edited = saved[0]
        edited["name"] = "edited after restart"
        try await again.save([edited])
        let changes = try await again.fetchZoneChanges(contactsZone, since: zoneToken)
        #expect(changes.modifications.map(\.recordID.recordName) == ["c0"])
        let databaseChanges = try await again.fetchDatabaseChanges(since: databaseToken)
        #expect(databaseChanges.modifications == [contactsZone])
        try await second.stop()
    }

    @Test("lookup finds live records and names what it could not find")
    func lookup() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let saved = try await ada.save([contact("Grace")])
            let response = try await ada.lookupRecords([
                saved[0].recordID, RecordValue.ID(recordName: "nobody", zoneID: contactsZone),
                RecordValue.ID(recordName: "x", zoneID: RecordZone.ID(zoneName: "Missing")),
            ])
            #expect(response.records == saved)
            #expect(response.failures.map(\.error.code) == [.unknownItem, .zoneNotFound])
        }
    }
}
