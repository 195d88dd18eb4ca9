import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

@Suite("Modifying records", .onEveryBackend)
struct RecordModificationTests {
    @Test("a saved record comes back with system fields, and an update needs its change tag")
    func saveAndUpdate() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let me = try await ada.account().userRecordName
            try await ada.saveZones("Contacts")
            let saved = try #require(try await ada.save([contact("Grace", email: "g@navy.mil")]).first)
            #expect(saved["name"] == "Grace")
            #expect(saved.recordChangeTag != nil)
            #expect(saved.creationDate != nil)
            #expect(saved.creationDate == saved.modificationDate)
            #expect(saved.creatorUserRecordID?.recordName == me)
            #expect(saved.lastModifiedUserRecordID?.recordName == me)

            var edited = saved
            edited["name"] = "Grace Hopper"
            let updated = try #require(try await ada.save([edited]).first)
            #expect(updated["name"] == "Grace Hopper")
            #expect(updated.recordChangeTag != saved.recordChangeTag)
            #expect(updated.creationDate == saved.creationDate)
            #expect(try await ada.contents()["Grace"]?["name"] == "Grace Hopper")
        }
    }

    @Test("a conflict returns serverRecordChanged carrying the server's record, and changes nothing")
    func conflictReturnsServerRecord() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let original = try #require(try await ada.save([contact("Grace")]).first)
            var first = original
            first["name"] = "Grace (device A)"
            let winner = try #require(try await ada.save([first]).first)

            var stale = original
            stale["name"] = "Grace (device B)"
            let response = try await ada.modifyRecords(ModifyRecordsRequest(saves: [stale]))
            let failure = try #require(response.failedRecordSaves.first)
            #expect(failure.error.code == .serverRecordChanged)
            #expect(failure.error.serverRecordValue == winner)
            #expect(response.savedRecords.isEmpty)

            // Saving a "new" record over an existing one is a conflict too.
            let duplicate = try await ada.modifyRecords(ModifyRecordsRequest(saves: [contact("Grace")]))
            #expect(duplicate.failedRecordSaves.first?.error.code == .serverRecordChanged)
            #expect(try await ada.contents()["Grace"] == winner)
        }
    }

    @Test("changedKeys writes only the changed keys; allKeys replaces everything; neither checks tags")
    func savePolicies() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let original = try #require(try await ada.save([contact("Grace", email: "g@navy.mil")]).first)
            var phoneOnly = RecordValue(recordType: "Contact", recordID: original.recordID)
            phoneOnly["phone"] = "+1 555 0100"
            phoneOnly["email"] = nil
            let merged = try #require(try await ada.save([phoneOnly], policy: .changedKeys).first)
            #expect(merged["name"] == "Grace")
            #expect(merged["phone"] == "+1 555 0100")
            #expect(merged["email"] == nil)

            var replacement = RecordValue(recordType: "Contact", recordID: original.recordID)
            replacement["name"] = "Only a name"
            let replaced = try #require(try await ada.save([replacement], policy: .allKeys).first)
            #expect(replaced.allKeys == ["name"])
            #expect(replaced.creationDate == original.creationDate)
        }
    }

    @Test("saving into a missing zone is zoneNotFound; updating or deleting a missing record is unknownItem")
    func missingZoneAndRecord() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let noZone = try await ada.modifyRecords(ModifyRecordsRequest(saves: [contact("Grace")]))
            #expect(noZone.failedRecordSaves.first?.error.code == .zoneNotFound)

            try await ada.saveZones("Contacts")
            var ghost = contact("Ghost")
            ghost.recordChangeTag = "zz"
            let response = try await ada.modifyRecords(
                ModifyRecordsRequest(
                    saves: [ghost], deletes: [RecordValue.ID(recordName: "nobody", zoneID: contactsZone)]))
            #expect(response.failedRecordSaves.first?.error.code == .unknownItem)
            #expect(response.failedRecordDeletes.first?.error.code == .unknownItem)

            // A deleted record's old change tag is unknownItem too; without a tag it is created again.
            let saved = try await ada.save([contact("Grace")])
            _ = try await ada.modifyRecords(ModifyRecordsRequest(deletes: [saved[0].recordID]))
            var stale = saved[0]
            stale["name"] = "again"
            let afterDelete = try await ada.modifyRecords(ModifyRecordsRequest(saves: [stale]))
            #expect(afterDelete.failedRecordSaves.first?.error.code == .unknownItem)
            let recreated = try await ada.save([contact("Grace")])
            #expect(recreated[0].creationDate! >= saved[0].creationDate!)
            #expect(try await ada.contents().keys.sorted() == ["Grace"])
        }
    }

    @Test("an atomic zone with one failure applies nothing of that zone; other zones go ahead")
    func atomicZoneAppliesNothing() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts", "Other")
            let existing = try await ada.save([contact("Grace"), contact("Alan")])
            let before = try await ada.fetchDatabaseChanges()

            var stale = existing[0]
            stale.recordChangeTag = "stale"
            stale["name"] = "changed"
            let other = RecordZone.ID(zoneName: "Other")
            let response = try await ada.modifyRecords(
                ModifyRecordsRequest(
                    saves: [contact("Ada"), stale, contact("Linus", zone: other)],
                    deletes: [RecordValue.ID(recordName: "Alan", zoneID: contactsZone)], atomic: true))
            let codes = Dictionary(
                uniqueKeysWithValues: response.failedRecordSaves.map { ($0.recordID.recordName, $0.error.code) })
            #expect(codes == ["Ada": .batchRequestFailed, "Grace": .serverRecordChanged])
            #expect(response.failedRecordDeletes.map(\.error.code) == [.batchRequestFailed])
            #expect(response.savedRecords.map(\.recordID.recordName) == ["Linus"])

            #expect(try await ada.contents() == ["Grace": existing[0], "Alan": existing[1]])
            let after = try await ada.fetchDatabaseChanges(since: before.changeToken)
            #expect(after.modifications == [other])
        }
    }

    @Test("without atomic, each item stands alone")
    func nonAtomicPartialSuccess() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let response = try await ada.modifyRecords(
                ModifyRecordsRequest(saves: [
                    contact("Ada"), contact("Nowhere", zone: RecordZone.ID(zoneName: "Missing")),
                ]))
            #expect(response.savedRecords.map(\.recordID.recordName) == ["Ada"])
            #expect(response.failedRecordSaves.map(\.error.code) == [.zoneNotFound])
        }
    }

    @Test("a replayed client request ID returns the first answer and applies nothing twice")
    func replayIsHarmless() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let start = try await ada.fetchZoneChanges(contactsZone)
            let request = ModifyRecordsRequest(saves: [contact("Grace")], clientRequestID: "req-1")
            let first = try await ada.modifyRecords(request)
            let replay = try await ada.modifyRecords(request)
            #expect(replay == first)
            #expect(first.savedRecords.count == 1)

            let changes = try await ada.fetchZoneChanges(contactsZone, since: start.changeToken)
            #expect(changes.modifications.count == 1)
            let nothingMore = try await ada.fetchDatabaseChanges(
                since: try await ada.fetchDatabaseChanges().changeToken)
            #expect(nothingMore.modifications.isEmpty)

            let reused = await syncError {
                _ = try await ada.modifyRecords(
                    ModifyRecordsRequest(saves: [contact("Other")], clientRequestID: "req-1"))
            }
            #expect(reused?.code == .invalidArguments)
            #expect(try await ada.contents().keys.sorted() == ["Grace"])
        }
    }

    @Test(
        "a replay answers byte for byte what the first answer said (saves, a failed save, a delete, changed keys); the answer kept for it leaves the saved fields out",
        arguments: [SavePolicy.ifServerRecordUnchanged, .changedKeys])
    func replayAnswersByteForByte(policy: SavePolicy) async throws {
        try await withServer { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            try await ada.save([contact("Old"), contact("Taken")])
            let note = String(repeating: "a long note ", count: 40)
            var grace = contact("Grace")
            grace["note"] = .string(note)
            // "Taken" exists: without its change tag, the save fails (under ifServerRecordUnchanged).
            let request = ModifyRecordsRequest(
                saves: [grace, contact("Ada", email: "ada@example.org"), contact("Taken")],
                deletes: [contact("Old").recordID], savePolicy: policy, clientRequestID: "req-\(policy)")
            let path = "/v1/databases/private/records/modify"
            let body = try JSONEncoder().encode(request)
            let first = try await ada.send(.post, path, body: body)
            let replay = try await ada.send(.post, path, body: body)
            #expect(first.status == 200, "\(String(decoding: first.body, as: UTF8.self))")
            #expect(replay.status == 200)
            #expect(replay.body == first.body, "\(String(decoding: replay.body, as: UTF8.self))")
            #expect(String(decoding: first.body, as: UTF8.self).contains(note))

            let kept = try await server.storedStrings("CAST(length(response) AS TEXT)", in: "client_request")
            let keptBytes = try #require(kept.first.flatMap { Int($0) })
            if policy == .changedKeys {
                #expect(keptBytes == first.body.count, "merged fields are kept whole")
            } else {
                #expect(
                    keptBytes < first.body.count - note.utf8.count, "kept \(keptBytes) of \(first.body.count) bytes")
            }
        }
    }

    @Test(
        "desiredKeys: empty answers saved records with system fields only, a list with those fields, replays alike; a conflict's server record stays whole",
        arguments: [SavePolicy.ifServerRecordUnchanged, .changedKeys])
    func desiredKeys(policy: SavePolicy) async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let taken = try #require(try await ada.save([contact("Taken", email: "t@example.org")]).first)

            let none = ModifyRecordsRequest(
                saves: [contact("Grace", email: "g@navy.mil"), contact("Taken")], savePolicy: policy,
                clientRequestID: "none-\(policy)", desiredKeys: [])
            let answer = try await ada.modifyRecords(none)
            let grace = try #require(answer.savedRecords.first { $0.recordID.recordName == "Grace" })
            // changedKeys checks no change tag: "Taken" is saved over.
            #expect(answer.savedRecords.count == (policy == .changedKeys ? 2 : 1))
            #expect(answer.savedRecords.allSatisfy { $0.fields.isEmpty })
            #expect(grace.recordChangeTag != nil && grace.creationDate != nil)
            #expect(try await ada.modifyRecords(none) == answer, "a replay is cut the same way")
            #expect(try await ada.contents()["Grace"]?["email"] == .string("g@navy.mil"), "stored whole")
            if policy == .ifServerRecordUnchanged {
                let conflict = try #require(answer.failedRecordSaves.first?.error)
                #expect(conflict.code == .serverRecordChanged)
                #expect(conflict.serverRecordValue == taken, "the server record of a conflict is whole")
            }

            let some = ModifyRecordsRequest(
                saves: [contact("Hopper", email: "h@navy.mil")], savePolicy: policy, clientRequestID: "some-\(policy)",
                desiredKeys: ["email", "missing"])
            let hopper = try #require(try await ada.modifyRecords(some).savedRecords.first)
            #expect(hopper.fields == ["email": .string("h@navy.mil")])
            #expect(try await ada.modifyRecords(some).savedRecords == [hopper])

            let bad = await syncError {
                _ = try await ada.modifyRecords(
                    ModifyRecordsRequest(saves: [contact("Bad")], desiredKeys: ["no space"]))
            }
            #expect(bad?.code == .invalidArguments)
            #expect(bad?.message.contains("desiredKeys[0]") == true, "\(String(describing: bad))")
            #expect(try await ada.contents()["Bad"] == nil, "a refused request changes nothing")
        }
    }

    @Test("limits: too many items, too large a body and too large a record are limitExceeded")
    func limits() async throws {
        var configuration = SyncServerConfiguration.testing
        configuration.limits = ServerLimits(
            maximumItemsPerRequest: 5, maximumRequestBytes: 64 * 1024, maximumRecordBytes: 1024)
        try await withServer(configuration: configuration) { _, anonymous in
            let advertised: ServerLimits = try await anonymous.call(.get, "/v1/limits")
            #expect(advertised == configuration.limits)
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")

            let tooMany = await syncError {
                _ = try await ada.modifyRecords(ModifyRecordsRequest(saves: (0..<6).map { contact("c\($0)") }))
            }
            #expect(tooMany?.code == .limitExceeded)
            #expect(tooMany?.message.contains("5") == true)

            var huge = contact("Huge")
            huge["notes"] = .string(String(repeating: "x", count: 70 * 1024))
            let answer = try await ada.send(
                .post, "/v1/databases/private/records/modify",
                body: try JSONEncoder().encode(ModifyRecordsRequest(saves: [huge])))
            #expect(answer.status == 413)
            #expect(answer.error?.code == .limitExceeded)

            var big = contact("Big")
            big["notes"] = .string(String(repeating: "x", count: 2000))
            let response = try await ada.modifyRecords(ModifyRecordsRequest(saves: [big, contact("Small")]))
            #expect(response.failedRecordSaves.map(\.error.code) == [.limitExceeded])
            #expect(try await ada.contents().keys.sorted() == ["Small"])
        }
    }
}
