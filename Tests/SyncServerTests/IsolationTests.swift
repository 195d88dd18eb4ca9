import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

@Suite("Two users never see or touch each other's data", .onEveryBackend)
struct IsolationTests {
    @Test("on every route, Bob sees nothing of Ada's and changes nothing of hers")
    func usersAreIsolated() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let bob = try await anonymous.signedUp(username: "bob")
            let adaID = try await ada.account().userRecordName
            try await ada.saveZones("Contacts")
            let saved = try await ada.save([contact("Grace")])
            let adaBefore = try await ada.contents()

            #expect(try await bob.listZones().isEmpty)
            let bobChanges = try await bob.fetchDatabaseChanges()
            #expect(bobChanges.modifications.isEmpty && bobChanges.deletions.isEmpty)
            #expect(await syncError { _ = try await bob.fetchZoneChanges(contactsZone) }?.code == .zoneNotFound)
            #expect(try await bob.lookupRecords([saved[0].recordID]).failures.map(\.error.code) == [.zoneNotFound])

            // Naming Ada as the owner is refused outright.
            let adasZone = RecordZone.ID(zoneName: "Contacts", ownerName: adaID)
            let asOwner = await syncError { _ = try await bob.fetchZoneChanges(adasZone) }
            #expect(asOwner?.code == .permissionFailure)
            var forged = saved[0]
            forged["name"] = "hijacked"
            let forgedRecord = RecordValue(
                recordID: RecordValue.ID(recordName: "Grace", zoneID: adasZone), recordType: "Contact",
                fields: ["name": "hijacked"],
                recordChangeTag: saved[0].recordChangeTag, creationDate: nil, modificationDate: nil,
                creatorUserRecordID: nil, lastModifiedUserRecordID: nil)
            let modify = await syncError {
                _ = try await bob.modifyRecords(ModifyRecordsRequest(saves: [forgedRecord]))
            }
            #expect(modify?.code == .permissionFailure)
            let deleteZone = await syncError { _ = try await bob.modifyZones(ModifyZonesRequest(deletes: [adasZone])) }
            #expect(deleteZone?.code == .permissionFailure)
            let lookup = await syncError {
                _ = try await bob.lookupRecords([RecordValue.ID(recordName: "Grace", zoneID: adasZone)])
            }
            #expect(lookup?.code == .permissionFailure)

            // Bob's own zone of the same name is his alone.
            try await bob.saveZones("Contacts")
            let bobsGrace = try await bob.modifyRecords(ModifyRecordsRequest(saves: [forged]))
            #expect(
                bobsGrace.failedRecordSaves.first?.error.code == .unknownItem,
                "Ada's change tag means nothing in Bob's zone")
            try await bob.save([contact("Bob's friend")])
            _ = try await bob.modifyZones(ModifyZonesRequest(deletes: [contactsZone]))

            #expect(try await ada.contents() == adaBefore)
            #expect(try await ada.listZones().map(\.zoneID) == [contactsZone])
        }
    }

    @Test("the shared database is empty and accepts no zones")
    func sharedDatabase() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let response = try await ada.saveZones("Contacts", scope: .shared)
            #expect(response.failedZoneSaves.map(\.error.code) == [.permissionFailure])
            #expect(try await ada.listZones(scope: .shared).isEmpty)
            #expect(try await ada.fetchDatabaseChanges(scope: .shared).modifications.isEmpty)
            let save = try await ada.modifyRecords(ModifyRecordsRequest(saves: [contact("x")]), scope: .shared)
            #expect(save.failedRecordSaves.map(\.error.code) == [.zoneNotFound])
            #expect(try await ada.listZones().isEmpty, "nothing leaked into the private database")
        }
    }
}
