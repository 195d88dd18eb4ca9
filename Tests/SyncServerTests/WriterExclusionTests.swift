import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// `X-Writer-ID` and `excludingWriter`: a writer's fetch leaves out what it saved itself, and only that.
@Suite("A fetch leaves out the writer's own saves", .onEveryBackend)
struct WriterExclusionTests {
    private func names(_ fetched: [RecordValue]) -> [String] { fetched.map(\.recordID.recordName).sorted() }

    @Test("records whose latest version the writer saved are left out; others', and every deletion, come")
    func ownSavesLeftOut() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let start = try await ada.fetchAllZoneChanges(contactsZone).token

            _ = try await ada.modifyRecords(ModifyRecordsRequest(saves: [contact("x"), contact("y")]), writerID: "w1")
            _ = try await ada.modifyRecords(ModifyRecordsRequest(saves: [contact("z")]), writerID: "w2")
            let asW1 = try await ada.fetchAllZoneChanges(contactsZone, since: start, excludingWriter: "w1")
            #expect(names(asW1.modifications) == ["z"])
            #expect(
                names(try await ada.fetchAllZoneChanges(contactsZone, since: start).modifications) == ["x", "y", "z"])
            // Page by page, the token moves past what was left out.
            let paged = try await ada.fetchAllZoneChanges(
                contactsZone, since: start, resultsLimit: 1, excludingWriter: "w1")
            #expect(names(paged.modifications) == ["z"])
            #expect(try await ada.fetchZoneChanges(contactsZone, since: paged.token).modifications.isEmpty)

            // w1 deletes y: the deletion comes. w2 changes x: x comes, though w1 saved it first.
            let saved = try await ada.contents()
            _ = try await ada.modifyRecords(
                ModifyRecordsRequest(deletes: [RecordValue.ID(recordName: "y", zoneID: contactsZone)]), writerID: "w1")
            var x = try #require(saved["x"])
            x["name"] = "x by w2"
            _ = try await ada.modifyRecords(ModifyRecordsRequest(saves: [x]), writerID: "w2")
            let later = try await ada.fetchAllZoneChanges(contactsZone, since: asW1.token, excludingWriter: "w1")
            #expect(names(later.modifications) == ["x"])
            #expect(later.deletions.map(\.recordID.recordName) == ["y"])

            // A request without a writer is nobody's: no fetch leaves it out.
            try await ada.save([contact("anonymous")])
            let anyone = try await ada.fetchAllZoneChanges(contactsZone, since: later.token, excludingWriter: "w1")
            #expect(names(anyone.modifications) == ["anonymous"])
        }
    }

    @Test("in a shared zone a writer ID is each user's own: the same ID hides nothing of anyone else's")
    func sharedWritersAreEachUsers() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let grace = try await anonymous.signedUp(username: "grace")
            let adaID = try await ada.account().userRecordName
            try await ada.saveZones("Contacts")
            let share = try await ada.saveShare(
                SaveShareRequest(
                    zoneID: contactsZone,
                    participants: [
                        .init(userRecordName: try await grace.account().userRecordName, permission: .readWrite)
                    ]))
            try await grace.acceptShare(token: share.token)
            let shared = RecordZone.ID(zoneName: "Contacts", ownerName: adaID)
            let adaStart = try await ada.fetchAllZoneChanges(contactsZone).token
            let graceStart = try await grace.fetchAllZoneChanges(shared, scope: .shared).token

            _ = try await ada.modifyRecords(ModifyRecordsRequest(saves: [contact("by Ada")]), writerID: "same")
            _ = try await grace.modifyRecords(
                ModifyRecordsRequest(saves: [contact("by Grace", zone: shared)]), scope: .shared, writerID: "same")
            let adaSees = try await ada.fetchAllZoneChanges(contactsZone, since: adaStart, excludingWriter: "same")
            #expect(names(adaSees.modifications) == ["by Grace"])
            let graceSees = try await grace.fetchAllZoneChanges(
                shared, since: graceStart, scope: .shared, excludingWriter: "same")
            #expect(names(graceSees.modifications) == ["by Ada"])
        }
    }

    @Test("a bad writer ID is refused")
    func badWriterID() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let refused = await syncError {
                _ = try await ada.modifyRecords(
                    ModifyRecordsRequest(saves: [contact("x")]), writerID: String(repeating: "w", count: 256))
            }
            #expect(refused?.code == .invalidArguments)
            let fetch = await syncError { _ = try await ada.fetchZoneChanges(contactsZone, excludingWriter: "") }
            #expect(fetch?.code == .invalidArguments)
            #expect(try await ada.contents().isEmpty)
        }
    }
}
