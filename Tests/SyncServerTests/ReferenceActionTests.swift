import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// A reference field to `name` in `zone`, with `action`.
private func reference(
    _ name: String, _ action: RecordValue.Reference.Action = .deleteSelf, zone: RecordZone.ID = contactsZone
) -> FieldValue {
    .reference(RecordValue.Reference(recordID: RecordValue.ID(recordName: name, zoneID: zone), action: action))
}

/// A note named `name` in `zone` with `fields` beside its text.
private func note(_ name: String, zone: RecordZone.ID = contactsZone, _ fields: [String: FieldValue] = [:])
    -> RecordValue
{
    var record = RecordValue(recordType: "Note", recordID: RecordValue.ID(recordName: name, zoneID: zone))
    record["text"] = .string(name)
    for (key, value) in fields { record[key] = value }
    return record
}

private func id(_ name: String, zone: RecordZone.ID = contactsZone) -> RecordValue.ID {
    RecordValue.ID(recordName: name, zoneID: zone)
}

/// CloudKit's `deleteSelf` reference action, performed by the server: deleting a record deletes the
/// records of its zone that reference it with `deleteSelf`, and theirs, in the same change.
@Suite("Reference actions: deleteSelf deletes what references a deleted record", .onEveryBackend)
struct ReferenceActionTests {
    @Test("deleting a record deletes its deleteSelf children and grandchildren; a fetch from before reports each")
    func chainIsDeleted() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            try await ada.save([
                note("Trip"), note("Day 1", ["trip": reference("Trip")]), note("Photo", ["day": reference("Day 1")]),
                note("Guide", ["trip": reference("Trip", .none)]), note("Unrelated"),
            ])
            let before = try await ada.fetchAllZoneChanges(contactsZone).token

            let answer = try await ada.modifyRecords(ModifyRecordsRequest(deletes: [id("Trip")]))
            #expect(answer.deletedRecordIDs == [id("Trip")], "the answer names what was asked, as CloudKit's")
            #expect(answer.failedRecordDeletes.isEmpty)

            let changes = try await ada.fetchAllZoneChanges(contactsZone, since: before)
            #expect(Set(changes.deletions.map(\.name)) == ["Trip", "Day 1", "Photo"])
            #expect(changes.deletions.allSatisfy { $0.recordType == "Note" })
            #expect(changes.modifications.isEmpty)
            #expect(try await ada.contents().keys.sorted() == ["Guide", "Unrelated"], "a none reference stays")
            let lookup = try await ada.lookupRecords([id("Day 1"), id("Photo")])
            #expect(lookup.failures.map(\.error.code) == [.unknownItem, .unknownItem])
        }
    }

    @Test("a list of references goes when any deleteSelf element's record does; none across zones, none for none")
    func listsAndZones() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts", "Notes")
            let notes = RecordZone.ID(zoneName: "Notes")
            try await ada.save([
                note("A"), note("B"),
                note("Tagged", ["tags": .list([reference("A", .none), reference("B")])]),
                note("Loose", ["tags": .list([reference("A", .none), reference("B", .none)])]),
                // CloudKit refuses references into another zone; this server stores them and ignores them.
                note("Crosser", ["other": reference("A", zone: notes)]),
            ])
            try await ada.save([
                note("A", zone: notes), note("Namesake", zone: notes, ["a": reference("A", zone: notes)]),
                note("Remote", zone: notes, ["a": reference("A")]),
            ])

            _ = try await ada.modifyRecords(ModifyRecordsRequest(deletes: [id("B")]))
            #expect(try await ada.contents().keys.sorted() == ["A", "Crosser", "Loose"])

            _ = try await ada.modifyRecords(ModifyRecordsRequest(deletes: [id("A")]))
            #expect(try await ada.contents().keys.sorted() == ["Crosser", "Loose"], "Crosser names Notes' A")
            #expect(try await ada.contents(of: notes).keys.sorted() == ["A", "Namesake", "Remote"])
        }
    }

    @Test(
        "a record saved in the request that deletes its deleteSelf target is saved, then deleted; one saved without it stays"
    )
    func savedWithTheDeletion() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let saved = try await ada.save([
                note("Album"), note("Old photo", ["album": reference("Album")]),
                note("Kept photo", ["album": reference("Album")]),
            ])
            let before = try await ada.fetchAllZoneChanges(contactsZone).token
            var kept = try #require(saved.first { $0.recordID.recordName == "Kept photo" })
            kept["album"] = nil

            let answer = try await ada.modifyRecords(
                ModifyRecordsRequest(
                    saves: [note("New photo", ["album": reference("Album")]), kept], deletes: [id("Album")]))
            #expect(answer.failedRecordSaves.isEmpty && answer.failedRecordDeletes.isEmpty)
            #expect(answer.savedRecords.map(\.recordID.recordName) == ["New photo", "Kept photo"])
            #expect(answer.deletedRecordIDs == [id("Album")])

            let changes = try await ada.fetchAllZoneChanges(contactsZone, since: before)
            #expect(Set(changes.deletions.map(\.name)) == ["Album", "Old photo", "New photo"])
            #expect(changes.modifications.map(\.recordID.recordName) == ["Kept photo"])
            #expect(try await ada.contents().keys.sorted() == ["Kept photo"])
        }
    }

    @Test("edits keep the index right: a reference removed or made none no longer deletes, one added does")
    func editedReferences() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let saved = try await ada.save([
                note("Target"), note("Removed", ["t": reference("Target")]),
                note("Made none", ["t": reference("Target")]),
                note("Added"), note("Moved", ["t": reference("Target")]), note("Elsewhere"),
            ])
            var edits: [RecordValue] = []
            for var record in saved {
                switch record.recordID.recordName {
                case "Removed": record["t"] = nil
                case "Made none": record["t"] = reference("Target", .none)
                case "Added": record["t"] = reference("Target")
                case "Moved": record["t"] = reference("Elsewhere")
                default: continue
                }
                edits.append(record)
            }
            try await ada.save(edits)

            _ = try await ada.modifyRecords(ModifyRecordsRequest(deletes: [id("Target")]))
            #expect(try await ada.contents().keys.sorted() == ["Elsewhere", "Made none", "Moved", "Removed"])
            _ = try await ada.modifyRecords(ModifyRecordsRequest(deletes: [id("Elsewhere")]))
            #expect(try await ada.contents().keys.sorted() == ["Made none", "Removed"])
        }
    }

    @Test("references in a loop delete each record once, and a record referencing itself goes as asked")
    func loops() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            try await ada.save([
                note("Ping", ["other": reference("Pong")]), note("Pong", ["other": reference("Ping")]),
                note("Self", ["me": reference("Self")]), note("Stays"),
            ])
            let before = try await ada.fetchAllZoneChanges(contactsZone).token
            let answer = try await ada.modifyRecords(ModifyRecordsRequest(deletes: [id("Ping"), id("Self")]))
            #expect(answer.deletedRecordIDs == [id("Ping"), id("Self")])
            let changes = try await ada.fetchAllZoneChanges(contactsZone, since: before)
            #expect(changes.deletions.map(\.name).sorted() == ["Ping", "Pong", "Self"], "each once")
            #expect(try await ada.contents().keys.sorted() == ["Stays"])
        }
    }

    @Test("usage after the deletion equals usage without the records it took along, and the quota counts them freed")
    func usage() async throws {
        var configuration = SyncServerConfiguration.testing
        configuration.defaultQuotaBytes = 10_000
        try await withServer(configuration: configuration) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let adaID = try await ada.account().userRecordName
            try await ada.saveZones("Contacts")
            try await ada.save([note("Stays")])
            let alone: StorageUsage = try await ada.call(.get, "/v1/account/usage")

            var big = note("Big", ["album": reference("Album")])
            big["blob"] = .string(String(repeating: "b", count: 6_000))
            try await ada.save([note("Album"), big, note("Small", ["albums": .list([reference("Album")])])])
            let full: StorageUsage = try await ada.call(.get, "/v1/account/usage")
            #expect(full.usedBytes > 6_000)

            // A save that fits only once Big is gone: the quota is checked on the request with what it takes along.
            var large = note("Large")
            large["blob"] = .string(String(repeating: "l", count: Int(10_000 - full.usedBytes + 1_000)))
            let answer = try await ada.modifyRecords(ModifyRecordsRequest(saves: [large], deletes: [id("Album")]))
            #expect(answer.savedRecords.map(\.recordID.recordName) == ["Large"])
            let after: StorageUsage = try await ada.call(.get, "/v1/account/usage")
            let largeBytes = Int64(FieldCoding.encode(large.fields).count)
            #expect(after.usedBytes == alone.usedBytes + largeBytes, "nothing of Album, Big and Small counts")
            #expect(try await server.storedFieldBytes(owner: adaID) == after.usedBytes)
            #expect(try await ada.contents().keys.sorted() == ["Large", "Stays"])
        }
    }
}

/// Reference actions in record hierarchies: what references a deleted record goes as any deletion
/// does, with its place in a shared hierarchy and its share.
@Suite("Reference actions in shared hierarchies", .onEveryBackend)
struct HierarchyReferenceActionTests {
    @Test("Grace, read-write, deletes Milk: what references it goes too, in her hierarchy and outside it")
    func participantDeletes() async throws {
        try await withServer { _, anonymous in
            var home = try await Household(anonymous)
            let share = try await home.share("Groceries", with: [(home.graceID, .readWrite)])
            try await home.grace.acceptShare(token: share.token)
            var receipt = Household.item("Receipt", parent: "Groceries")
            receipt["for"] = reference("Milk", zone: Household.zone)
            var memo = Household.item("Memo", parent: nil)
            memo["about"] = reference("Milk", zone: Household.zone)
            try await home.ada.save([receipt, memo])
            let graces = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)
            #expect(graces.modifications.contains { $0.recordID.recordName == "Receipt" })
            let adas = try await home.ada.fetchAllZoneChanges(Household.zone).token

            // She names the record as her shared database does, the owner's name in the zone's ID.
            let answer = try await home.grace.modifyRecords(
                ModifyRecordsRequest(deletes: [RecordValue.ID(recordName: "Milk", zoneID: home.lists)]),
                scope: .shared)
            #expect(answer.failedRecordDeletes.isEmpty, "\(answer.failedRecordDeletes)")

            // Organic, below Milk, leaves her hierarchy as with any deletion of its parent.
            let seen = try await home.grace.fetchAllZoneChanges(home.lists, since: graces.token, scope: .shared)
            #expect(Set(seen.deletions.map(\.name)) == ["Milk", "Receipt", "Organic"], "not Memo, never hers")
            let owners = try await home.ada.fetchAllZoneChanges(Household.zone, since: adas)
            #expect(Set(owners.deletions.map(\.name)) == ["Milk", "Receipt", "Memo"])
            #expect(try await home.ada.contents(of: Household.zone)["Organic"] != nil)
        }
    }

    @Test("a record taken along that is a share's root takes its share along, as its deletion would")
    func shareRootIsTakenAlong() async throws {
        try await withServer { _, anonymous in
            var home = try await Household(anonymous)
            let share = try await home.share("Chores", with: [(home.bobID, .readOnly)])
            try await home.bob.acceptShare(token: share.token)
            var chores = try #require(home.saved["Chores"])
            chores["for"] = reference("Secret", zone: Household.zone)
            home.saved["Chores"] = try await home.ada.save([chores]).first
            let before = try await home.ada.fetchAllZoneChanges(Household.zone).token

            _ = try await home.ada.modifyRecords(
                ModifyRecordsRequest(deletes: [RecordValue.ID(recordName: "Secret", zoneID: Household.zone)]))
            let changes = try await home.ada.fetchAllZoneChanges(Household.zone, since: before)
            #expect(Set(changes.deletions.map(\.name)) == ["Secret", "Chores", share.recordName])
            #expect(try await home.ada.shares(Household.zone).isEmpty)
            #expect(try await home.bob.listZones(scope: .shared).isEmpty, "Bob's hierarchy went with its root")
            #expect(try await home.ada.contents(of: Household.zone)["Dishes"] != nil, "a parent takes no child along")
        }
    }
}
