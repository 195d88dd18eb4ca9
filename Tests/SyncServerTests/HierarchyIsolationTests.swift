import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// What a participant of a record-hierarchy share must never learn or do outside it, however they
/// phrase a request, and the hierarchy rules that hold whatever the order of a request's saves.
/// (Ada's "Lists" as in `HierarchySharingTests`: Groceries › Milk › Organic, Groceries › Eggs,
/// Chores › Dishes, Secret; Grace may change Groceries.)
@Suite("Sharing records: nothing outside a participant's hierarchy, and hierarchies stay whole", .onEveryBackend)
struct HierarchyIsolationTests {
    private func sharedWithGrace(_ anonymous: TestClient) async throws -> (Household, Share) {
        var home = try await Household(anonymous)
        let share = try await home.share("Groceries", with: [(home.graceID, .readWrite)])
        try await home.grace.acceptShare(token: share.token)
        return (home, share)
    }

    private func item(_ name: String, parent: String?, in home: Household) -> RecordValue {
        Household.item(name, parent: parent, zone: home.lists)
    }

    @Test("Grace cannot take records along by creating the parent they name, nor learn of them")
    func noAdoption() async throws {
        try await withServer { _, anonymous in
            var (home, _) = try await sharedWithGrace(anonymous)
            let first = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)
            // Ada deletes Milk: Organic stays, below a parent that is no more; then hangs Diary below it.
            _ = try await home.ada.modifyRecords(
                ModifyRecordsRequest(deletes: [RecordValue.ID(recordName: "Milk", zoneID: Household.zone)]))
            home.saved["Diary"] = try await home.ada.save([Household.item("Diary", parent: "Organic")]).first
            let answer = try await home.grace.modifyRecords(
                ModifyRecordsRequest(saves: [item("Milk", parent: "Groceries", in: home)]), scope: .shared)
            #expect(answer.failedRecordSaves.map(\.error.code) == [.permissionFailure])
            let adas = try await home.ada.contents(of: Household.zone)
            #expect(adas["Milk"] == nil && adas["Organic"]?.share == nil)
            let after = try await home.grace.fetchAllZoneChanges(home.lists, since: first.token, scope: .shared)
            #expect(!after.modifications.map(\.recordID.recordName).contains("Diary"))
            #expect(Set(after.deletions.map(\.name)) == ["Milk", "Organic"], "what she saw goes, and only that")
        }
    }

    @Test("every refusal outside her hierarchy is the same; a root's hidden parent is never shown")
    func noOracles() async throws {
        try await withServer { _, anonymous in
            var (home, share) = try await sharedWithGrace(anonymous)
            // Another share's root, a hidden record with a share below it, a cycle through hidden records.
            _ = try await home.share("Chores", with: [])
            home.saved["Box"] = try await home.ada.save([Household.item("Box", parent: nil)]).first
            try await home.move("Chores", below: "Box")
            try await home.move("Secret", below: "Dishes")
            let attempts = [
                item("Chores", parent: "Groceries", in: home), item("Box", parent: "Groceries", in: home),
                item("Chores", parent: "Secret", in: home), item("Elsewhere", parent: "Secret", in: home),
            ]
            for attempt in attempts {
                let answer = try await home.grace.modifyRecords(ModifyRecordsRequest(saves: [attempt]), scope: .shared)
                let error = try #require(answer.failedRecordSaves.first?.error, "\(attempt.recordID.recordName)")
                #expect(error.code == .permissionFailure, "\(attempt.recordID.recordName): \(error)")
                // One answer for all, whatever is there: only the record's own name differs.
                #expect(
                    error.message.replacingOccurrences(of: attempt.recordID.recordName, with: "X")
                        == "record 'X' cannot be saved in a record hierarchy of zone 'Lists' shared with you read-write; a record you save must have a parent in one, and must not be another's parent",
                    "\(error.message)")
                #expect(error.serverRecordValue == nil)
            }

            // Ada hangs Groceries below Box: Grace sees the root without its parent, and saving it keeps it there.
            try await home.move("Groceries", below: "Box")
            let fetched = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)
            var groceries = try #require(fetched.modifications.first { $0.recordID.recordName == "Groceries" })
            #expect(groceries.parent == nil)
            let looked = try await home.grace.lookupRecords(
                [RecordValue.ID(recordName: "Groceries", zoneID: home.lists)], scope: .shared)
            #expect(looked.records.first?.parent == nil && looked.records.first?.share != nil)
            groceries["title"] = "Food"
            groceries.parent = .init(recordID: RecordValue.ID(recordName: "Dishes", zoneID: home.lists))
            let saved = try await home.grace.modifyRecords(ModifyRecordsRequest(saves: [groceries]), scope: .shared)
            #expect(saved.failedRecordSaves.isEmpty, "\(saved.failedRecordSaves)")
            #expect(saved.savedRecords.first?.parent == nil)
            let adas = try #require(try await home.ada.contents(of: Household.zone)["Groceries"])
            #expect(
                adas["title"] == "Food" && adas.parent?.recordID.recordName == "Box", "the root stays where Ada put it")
            #expect(share.rootRecordName == "Groceries")
        }
    }

    @Test("a first fetch names nothing deleted or moved out before; later fetches name only what she could see")
    func firstFetchNamesNothingGone() async throws {
        try await withServer { _, anonymous in
            var home = try await Household(anonymous)
            let share = try await home.share("Groceries", with: [(home.graceID, .readWrite)])
            // Before Grace accepts: Eggs moves out, Organic is deleted.
            try await home.move("Eggs", below: nil)
            _ = try await home.ada.modifyRecords(
                ModifyRecordsRequest(deletes: [RecordValue.ID(recordName: "Organic", zoneID: Household.zone)]))
            try await home.grace.acceptShare(token: share.token)
            // In pages of one: each page's token carries on where the last stopped.
            let paged = try await home.grace.fetchAllZoneChanges(home.lists, resultsLimit: 1, scope: .shared)
            #expect(Set(paged.modifications.map(\.recordID.recordName)) == ["Groceries", "Milk", share.recordName])
            #expect(paged.deletions.isEmpty, "\(paged.deletions.map(\.name))")

            // Many moves at once, fetched in small pages: the end is what a fetch from the start gives.
            for name in ["A", "B", "C", "D", "E"] {
                home.saved[name] = try await home.ada.save([Household.item(name, parent: "Milk")]).first
            }
            try await home.move("Milk", below: nil)
            try await home.move("Milk", below: "Groceries")
            try await home.move("Eggs", below: "Milk")
            // Page by page, as a device applies them.
            var seen = Set(paged.modifications.map(\.recordID.recordName))
            var token = paged.token
            var pages = 0
            while true {
                let page = try await home.grace.fetchZoneChanges(
                    home.lists, since: token, resultsLimit: 2, scope: .shared)
                seen.subtract(page.deletions.map(\.name))
                seen.formUnion(page.modifications.map(\.recordID.recordName))
                token = page.changeToken
                pages += 1
                if !page.moreComing { break }
            }
            #expect(pages > 2, "the moves took several pages")
            let whole = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)
            #expect(seen == Set(whole.modifications.map(\.recordID.recordName)))
            #expect(Set(whole.modifications.map(\.recordID.recordName)).isSuperset(of: ["A", "E", "Eggs", "Milk"]))
        }
    }

    @Test("no cycle in one request, whatever its order, nor through a parent saved later")
    func noCycles() async throws {
        try await withServer { _, anonymous in
            var home = try await Household(anonymous)
            var milk = try #require(home.saved["Milk"])
            milk.parent = .init(recordID: RecordValue.ID(recordName: "Eggs", zoneID: Household.zone))
            var eggs = try #require(home.saved["Eggs"])
            eggs.parent = .init(recordID: RecordValue.ID(recordName: "Milk", zoneID: Household.zone))
            // Either alone would do; together they would make a cycle: the first is refused, the second saved.
            let both = try await home.ada.modifyRecords(ModifyRecordsRequest(saves: [milk, eggs]))
            #expect(both.failedRecordSaves.map(\.recordID.recordName) == ["Milk"], "\(both.failedRecordSaves)")
            #expect(both.failedRecordSaves.map(\.error.code) == [.invalidArguments])
            let contents = try await home.ada.contents(of: Household.zone)
            #expect(contents["Milk"]?.parent?.recordID.recordName == "Groceries")
            #expect(contents["Eggs"]?.parent?.recordID.recordName == "Milk")

            // A below B, which does not exist yet; then B below A.
            home.saved["A"] = try await home.ada.save([Household.item("A", parent: "B")]).first
            let closing = try await home.ada.modifyRecords(
                ModifyRecordsRequest(saves: [Household.item("B", parent: "A")]))
            #expect(closing.failedRecordSaves.map(\.error.code) == [.invalidArguments])

            // A child saved before its new parent in one request joins the share with it.
            let share = try await home.share("Groceries", with: [(home.graceID, .readWrite)])
            try await home.grace.acceptShare(token: share.token)
            let late = try await home.grace.modifyRecords(
                ModifyRecordsRequest(
                    saves: [item("Cake", parent: "Tin", in: home), item("Tin", parent: "Groceries", in: home)]),
                scope: .shared)
            #expect(late.failedRecordSaves.isEmpty, "\(late.failedRecordSaves)")
        }
    }

    @Test("a name deleted in the hierarchy and saved again outside it reaches Grace as a deletion")
    func reusedName() async throws {
        try await withServer { _, anonymous in
            let (home, _) = try await sharedWithGrace(anonymous)
            let first = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)
            _ = try await home.ada.modifyRecords(
                ModifyRecordsRequest(deletes: [RecordValue.ID(recordName: "Eggs", zoneID: Household.zone)]))
            _ = try await home.ada.save([Household.item("Eggs", parent: "Chores")])
            let after = try await home.grace.fetchAllZoneChanges(home.lists, since: first.token, scope: .shared)
            #expect(after.deletions.map(\.name) == ["Eggs"])
            #expect(after.modifications.isEmpty)
        }
    }

    @Test("a share's record name must not be a record's")
    func shareNameTaken() async throws {
        try await withServer { _, anonymous in
            let home = try await Household(anonymous)
            for name in ["Groceries", "Secret"] {
                let refusal = await home.refusal(
                    SaveShareRequest(
                        zoneID: Household.zone, participants: [], rootRecord: try #require(home.saved["Groceries"]),
                        shareRecordName: name))
                #expect(refusal?.code == .invalidArguments, "\(name): \(String(describing: refusal))")
            }
            let contents = try await home.ada.contents(of: Household.zone)
            #expect(contents["Secret"]?.recordType == "Item" && contents["Groceries"]?.share == nil)
        }
    }
}
