import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// Ada's zone "Lists": Groceries (with Milk, Eggs and, below Milk, Organic), Chores (with Dishes), and
/// Secret on its own. She shares records of it with Grace and Bob; Eve is a stranger.
struct Household {
    var ada: TestClient
    var grace: TestClient
    var bob: TestClient
    var adaID: String
    var graceID: String
    var bobID: String
    /// Ada's records as she saved them last, by name.
    var saved: [String: RecordValue] = [:]

    static let zone = RecordZone.ID(zoneName: "Lists")
    static let tree: [(String, String?)] = [
        ("Groceries", nil), ("Milk", "Groceries"), ("Eggs", "Groceries"), ("Organic", "Milk"), ("Chores", nil),
        ("Dishes", "Chores"), ("Secret", nil),
    ]

    init(_ anonymous: TestClient) async throws {
        ada = try await anonymous.signedUp(username: "ada")
        grace = try await anonymous.signedUp(username: "grace")
        bob = try await anonymous.signedUp(username: "bob")
        ada.deviceID = "ada-laptop"
        adaID = try await ada.account().userRecordName
        graceID = try await grace.account().userRecordName
        bobID = try await bob.account().userRecordName
        try await ada.saveZones("Lists")
        for record in try await ada.save(Self.tree.map { Self.item($0.0, parent: $0.1) }) {
            saved[record.recordID.recordName] = record
        }
    }

    /// Ada's Lists as her participants name it.
    var lists: RecordZone.ID { RecordZone.ID(zoneName: "Lists", ownerName: adaID) }

    static func item(_ name: String, parent: String?, zone: RecordZone.ID = Household.zone) -> RecordValue {
        var record = RecordValue(recordType: "Item", recordID: RecordValue.ID(recordName: name, zoneID: zone))
        record["title"] = .string(name)
        record.parent = parent.map { .init(recordID: RecordValue.ID(recordName: $0, zoneID: zone)) }
        return record
    }

    /// Ada moves `name` below `parent` (nil: out of any hierarchy).
    mutating func move(_ name: String, below parent: String?) async throws {
        var record = try #require(saved[name])
        record.parent = parent.map { .init(recordID: RecordValue.ID(recordName: $0, zoneID: Self.zone)) }
        saved[name] = try #require(try await ada.save([record]).first)
    }

    /// Ada shares `root` with these people; returns the share.
    mutating func share(
        _ root: String, with invitees: [(String, ShareParticipant.Permission)]
    ) async throws -> Share {
        let share = try await ada.saveShare(
            SaveShareRequest(
                zoneID: Self.zone, participants: invitees.map { .init(userRecordName: $0.0, permission: $0.1) },
                rootRecord: try #require(saved[root])))
        saved[root] = try await ada.lookupRecords([RecordValue.ID(recordName: root, zoneID: Self.zone)]).records.first
        return share
    }

    /// The failure a request for Ada's zone gets, or nil when it succeeds.
    func refusal(_ request: SaveShareRequest) async -> SyncError? {
        do {
            _ = try await ada.saveShare(request)
            return nil
        } catch let error as SyncError {
            return error
        } catch {
            return SyncError(.internalError, "\(error)")
        }
    }
}

extension FetchZoneChangesResponse.Deletion {
    var name: String { recordID.recordName }
}

@Suite("Sharing records: a root and the records below it, with CloudKit's hierarchy rules", .onEveryBackend)
struct HierarchySharingTests {
    @Test("Grace sees the root, the records below it and the share; nothing else of the zone, not even by name")
    func shareAHierarchy() async throws {
        try await withServer { _, anonymous in
            var home = try await Household(anonymous)
            let tagBefore = home.saved["Groceries"]?.recordChangeTag
            let share = try await home.share("Groceries", with: [(home.graceID, .readWrite)])
            #expect(share.rootRecordName == "Groceries" && share.recordName.hasPrefix("share-"))
            let root = try #require(home.saved["Groceries"])
            #expect(root.share?.recordID.recordName == share.recordName, "the root refers to its share")
            #expect(root.recordChangeTag != tagBefore, "the root was saved with the share")

            let metadata = try await home.grace.shareMetadata(token: share.token)
            #expect(metadata.hierarchicalRootRecordID == RecordValue.ID(recordName: "Groceries", zoneID: home.lists))
            try await home.grace.acceptShare(token: share.token)
            #expect(try await home.grace.listZones(scope: .shared).map(\.zoneID) == [home.lists])

            let fetched = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)
            #expect(
                Set(fetched.modifications.map(\.recordID.recordName)) == [
                    "Groceries", "Milk", "Eggs", "Organic", share.recordName,
                ])
            #expect(fetched.deletions.isEmpty)
            let milk = try #require(fetched.modifications.first { $0.recordID.recordName == "Milk" })
            #expect(milk.parent?.recordID == RecordValue.ID(recordName: "Groceries", zoneID: home.lists))

            let lookup = try await home.grace.lookupRecords(
                ["Milk", "Secret", "Dishes"].map { RecordValue.ID(recordName: $0, zoneID: home.lists) },
                scope: .shared)
            #expect(lookup.records.map(\.recordID.recordName) == ["Milk"])
            #expect(lookup.failures.map(\.error.code) == [.unknownItem, .unknownItem])

            // Outside the hierarchy, a write answers as for a record that is not there.
            var secret = Household.item("Secret", parent: nil, zone: home.lists)
            secret["title"] = "overwritten"
            let writes = try await home.grace.modifyRecords(
                ModifyRecordsRequest(
                    saves: [secret], deletes: [RecordValue.ID(recordName: "Dishes", zoneID: home.lists)]),
                scope: .shared)
            #expect(writes.failedRecordSaves.map(\.error.code) == [.permissionFailure])
            #expect(writes.failedRecordSaves.first?.error.serverRecordValue == nil, "nothing of Secret is shown")
            #expect(writes.failedRecordDeletes.map(\.error.code) == [.unknownItem])
            let adas = try await home.ada.contents(of: Household.zone)
            #expect(adas["Secret"]?["title"] == "Secret" && adas["Dishes"] != nil)
        }
    }

    @Test("records join and leave through their parents, with the records below them; Grace's fetches follow")
    func joinAndLeave() async throws {
        try await withServer { _, anonymous in
            var home = try await Household(anonymous)
            let share = try await home.share("Groceries", with: [(home.graceID, .readWrite)])
            try await home.grace.acceptShare(token: share.token)
            let first = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)

            // Ada adds Bread below the root, takes Milk (and Organic below it) out, puts Dishes below Eggs.
            home.saved["Bread"] = try await home.ada.save([Household.item("Bread", parent: "Groceries")]).first
            try await home.move("Milk", below: nil)
            try await home.move("Dishes", below: "Eggs")
            let second = try await home.grace.fetchAllZoneChanges(home.lists, since: first.token, scope: .shared)
            #expect(Set(second.modifications.map(\.recordID.recordName)) == ["Bread", "Dishes"])
            #expect(Set(second.deletions.map(\.name)) == ["Milk", "Organic"])
            #expect(second.deletions.first { $0.name == "Organic" }?.recordType == "Item")

            // Grace adds Butter below the root; a record outside the hierarchy, or with no parent, is refused.
            let writes = try await home.grace.modifyRecords(
                ModifyRecordsRequest(
                    saves: [
                        Household.item("Butter", parent: "Groceries", zone: home.lists),
                        Household.item("Sneaky", parent: "Secret", zone: home.lists),
                        Household.item("Orphan", parent: nil, zone: home.lists),
                    ]), scope: .shared)
            #expect(writes.savedRecords.map(\.recordID.recordName) == ["Butter"])
            #expect(writes.failedRecordSaves.map(\.error.code) == [.permissionFailure, .permissionFailure])
            let adas = try await home.ada.contents(of: Household.zone)
            #expect(adas["Butter"]?.lastModifiedUserRecordID?.recordName == home.graceID)
            #expect(adas["Sneaky"] == nil && adas["Orphan"] == nil)

            // Milk comes back with Organic; Ada deletes Eggs, and Dishes below it leaves with it.
            try await home.move("Milk", below: "Groceries")
            _ = try await home.ada.modifyRecords(
                ModifyRecordsRequest(deletes: [RecordValue.ID(recordName: "Eggs", zoneID: Household.zone)]))
            let third = try await home.grace.fetchAllZoneChanges(home.lists, since: second.token, scope: .shared)
            #expect(Set(third.modifications.map(\.recordID.recordName)) == ["Butter", "Milk", "Organic"])
            #expect(Set(third.deletions.map(\.name)) == ["Eggs", "Dishes"])
            let all = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)
            #expect(
                Set(all.modifications.map(\.recordID.recordName)) == [
                    "Groceries", "Milk", "Organic", "Bread", "Butter", share.recordName,
                ], "a fetch from the start agrees")
        }
    }

    @Test("a record is in one share at most: alreadyShared, and no cycles")
    func alreadyShared() async throws {
        try await withServer { _, anonymous in
            var home = try await Household(anonymous)
            _ = try await home.share("Groceries", with: [(home.graceID, .readWrite)])
            func request(root: String, shareRecordName: String? = nil) throws -> SaveShareRequest {
                SaveShareRequest(
                    zoneID: Household.zone, participants: [.init(userRecordName: home.bobID, permission: .readOnly)],
                    rootRecord: try #require(home.saved[root]), shareRecordName: shareRecordName)
            }
            #expect(await home.refusal(try request(root: "Groceries"))?.code == .alreadyShared, "its root again")
            #expect(await home.refusal(try request(root: "Milk"))?.code == .alreadyShared, "a record in it")
            #expect(
                await home.refusal(SaveShareRequest(zoneID: Household.zone, participants: []))?.code == .alreadyShared,
                "the whole zone")

            _ = try await home.share("Chores", with: [(home.bobID, .readOnly)])
            // A share's root cannot go below a record of another share; a hierarchy has no cycles; an
            // unshared record with a shared root below it cannot join a hierarchy.
            func below(_ name: String, _ parent: String) throws -> RecordValue {
                var record = try #require(home.saved[name])
                record.parent = .init(recordID: RecordValue.ID(recordName: parent, zoneID: Household.zone))
                return record
            }
            // A root may go below a record that is in no share.
            home.saved["Box"] = try await home.ada.save([Household.item("Box", parent: nil)]).first
            try await home.move("Chores", below: "Box")
            let moves = try await home.ada.modifyRecords(
                ModifyRecordsRequest(
                    saves: [
                        try below("Chores", "Eggs"), try below("Milk", "Organic"), try below("Groceries", "Dishes"),
                        try below("Box", "Milk"),
                    ]))
            #expect(
                moves.failedRecordSaves.map(\.error.code) == [
                    .alreadyShared, .invalidArguments, .alreadyShared, .alreadyShared,
                ], "\(moves.failedRecordSaves.map(\.error.message))")
            // A record may move from one hierarchy to another: it is in one share at a time.
            #expect(
                try await home.ada.modifyRecords(ModifyRecordsRequest(saves: [try below("Eggs", "Dishes")]))
                    .failedRecordSaves.isEmpty)

            // A zone shared whole has no record shares.
            try await home.ada.saveZones("Family")
            try await home.ada.saveShare(SaveShareRequest(zoneID: RecordZone.ID(zoneName: "Family"), participants: []))
            let family = try #require(
                try await home.ada.save([Household.item("Mum", parent: nil, zone: RecordZone.ID(zoneName: "Family"))])
                    .first)
            #expect(
                await home.refusal(
                    SaveShareRequest(zoneID: RecordZone.ID(zoneName: "Family"), participants: [], rootRecord: family))?
                    .code == .alreadyShared)
            // A new share needs its root; a share's root does not change.
            #expect(
                await home.refusal(
                    SaveShareRequest(zoneID: Household.zone, participants: [], shareRecordName: "share-none"))?.code
                    == .invalidArguments)
        }
    }

    @Test("read-only: Bob reads the hierarchy and changes nothing; only the owner deletes the root")
    func readOnlyAndRoot() async throws {
        try await withServer { _, anonymous in
            var home = try await Household(anonymous)
            let share = try await home.share("Groceries", with: [(home.graceID, .readWrite), (home.bobID, .readOnly)])
            try await home.bob.acceptShare(token: share.token)
            try await home.grace.acceptShare(token: share.token)
            let bobs = try await home.bob.fetchAllZoneChanges(home.lists, scope: .shared)
            var milk = try #require(bobs.modifications.first { $0.recordID.recordName == "Milk" })
            milk["title"] = "Oat milk"
            let bobWrites = try await home.bob.modifyRecords(
                ModifyRecordsRequest(
                    saves: [milk, Household.item("Cake", parent: "Groceries", zone: home.lists)],
                    deletes: [RecordValue.ID(recordName: "Eggs", zoneID: home.lists)]), scope: .shared)
            #expect(bobWrites.failedRecordSaves.map(\.error.code) == [.permissionFailure, .permissionFailure])
            #expect(bobWrites.failedRecordDeletes.map(\.error.code) == [.permissionFailure])
            #expect(try await home.ada.contents(of: Household.zone)["Milk"]?["title"] == "Milk")

            let graceDeletes = try await home.grace.modifyRecords(
                ModifyRecordsRequest(deletes: [RecordValue.ID(recordName: "Groceries", zoneID: home.lists)]),
                scope: .shared)
            #expect(graceDeletes.failedRecordDeletes.map(\.error.code) == [.permissionFailure])
            // Grace's write of the same record goes through.
            let graces = try await home.grace.modifyRecords(ModifyRecordsRequest(saves: [milk]), scope: .shared)
            #expect(graces.failedRecordSaves.isEmpty, "\(graces.failedRecordSaves)")
        }
    }

    @Test("the owner deletes a share, then another's root: each hierarchy leaves Grace, then the zone does")
    func ownerDeletes() async throws {
        try await withServer(transport: .loopback) { _, anonymous in
            var home = try await Household(anonymous)
            let groceries = try await home.share("Groceries", with: [(home.graceID, .readWrite)])
            try await home.grace.acceptShare(token: groceries.token)
            let first = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)

            // A second share of the zone: her token from before it cannot say what it lacks.
            let chores = try await home.share("Chores", with: [(home.graceID, .readOnly)])
            try await home.grace.acceptShare(token: chores.token)
            do {
                _ = try await home.grace.fetchZoneChanges(home.lists, since: first.token, scope: .shared)
                Issue.record("a token from before the second share still fetched")
            } catch let error as SyncError {
                #expect(error.code == .changeTokenExpired, "\(error)")
            }
            let both = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)
            #expect(both.modifications.count == 8, "\(both.modifications.map(\.recordID.recordName))")

            // Ada stops sharing Groceries: the zone restarts in Grace's shared database (deleted, then
            // new on the next page), and a fetch from the start holds only Chores; her old token has expired.
            let database = try await home.grace.fetchDatabaseChanges(scope: .shared)
            try await home.ada.deleteShare(Household.zone, shareRecordName: groceries.recordName)
            let root = try #require(try await home.ada.contents(of: Household.zone)["Groceries"])
            #expect(root.share == nil && root.recordChangeTag != home.saved["Groceries"]?.recordChangeTag)
            let restarted = try await home.grace.fetchDatabaseChanges(since: database.changeToken, scope: .shared)
            #expect(restarted.deletions.map(\.zoneID) == [home.lists] && restarted.moreComing)
            let back = try await home.grace.fetchDatabaseChanges(since: restarted.changeToken, scope: .shared)
            #expect(back.modifications == [home.lists] && back.deletions.isEmpty && !back.moreComing)
            do {
                _ = try await home.grace.fetchZoneChanges(home.lists, since: both.token, scope: .shared)
                Issue.record("a token from before Groceries left still fetched")
            } catch let error as SyncError {
                #expect(error.code == .changeTokenExpired, "\(error)")
            }
            let now = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)
            #expect(Set(now.modifications.map(\.recordID.recordName)) == ["Chores", "Dishes", chores.recordName])
            #expect(now.deletions.isEmpty, "a fetch from the start names nothing gone")
            #expect(try await home.grace.listZones(scope: .shared).map(\.zoneID) == [home.lists], "Chores stays")

            // Deleting a share's root deletes the share: the zone leaves Grace's shared database, and
            // she is told.
            let push = try await home.grace.openPush()
            defer { push.close() }
            _ = try await home.ada.modifyRecords(
                ModifyRecordsRequest(deletes: [RecordValue.ID(recordName: "Chores", zoneID: Household.zone)]))
            #expect(await push.next()?.message.scope == .shared)
            #expect(try await home.grace.listZones(scope: .shared).isEmpty)
            let gone = try await home.grace.fetchDatabaseChanges(since: back.changeToken, scope: .shared)
            #expect(gone.deletions.map(\.zoneID) == [home.lists])
            #expect(try await home.ada.shares(Household.zone).isEmpty)
        }
    }

    @Test("Grace leaves by deleting the share from her shared database; Ada's records are untouched")
    func participantLeaves() async throws {
        try await withServer { _, anonymous in
            var home = try await Household(anonymous)
            let share = try await home.share("Groceries", with: [(home.graceID, .readWrite)])
            try await home.grace.acceptShare(token: share.token)
            let database = try await home.grace.fetchDatabaseChanges(scope: .shared)
            let left = try await home.grace.modifyRecords(
                ModifyRecordsRequest(deletes: [share.recordID.withZone(home.lists)]), scope: .shared)
            #expect(left.deletedRecordIDs.map(\.recordName) == [share.recordName])
            #expect(try await home.grace.listZones(scope: .shared).isEmpty)
            let gone = try await home.grace.fetchDatabaseChanges(since: database.changeToken, scope: .shared)
            #expect(gone.deletions.map(\.zoneID) == [home.lists])
            let stored = try await home.ada.fetchShare(Household.zone, shareRecordName: share.recordName)
            #expect(stored.participants.map(\.acceptanceStatus) == [.accepted, .removed])
            #expect(try await home.ada.contents(of: Household.zone).count == Household.tree.count + 1)
        }
    }
}

extension HierarchySharingTests {
    @Test("bad record-share requests and parents are refused whole, saying what is wrong; nothing changes")
    func badRequests() async throws {
        try await withServer { _, anonymous in
            let home = try await Household(anonymous)
            let before = try await home.ada.contents(of: Household.zone)
            let lists = #"{"zoneName":"Lists","ownerName":"__defaultOwner__"}"#
            let groceries = #"{"recordID":{"recordName":"Groceries","zoneID":\#(lists)},"recordType":"Item"}"#
            let refusals: [(body: String, status: Int, says: String)] = [
                (#"{"zoneID":\#(lists),"participants":[],"rootRecord":null}"#, 400, "rootRecord"),
                (
                    #"{"zoneID":\#(lists),"participants":[],"rootRecord":{"recordID":{"recordName":"Groceries","zoneID":{"zoneName":"Other","ownerName":"__defaultOwner__"}},"recordType":"Item"}}"#,
                    400, "not in the share's zone"
                ),
                (
                    #"{"zoneID":\#(lists),"participants":[],"rootRecord":{"recordID":{"recordName":"S","zoneID":\#(lists)},"recordType":"cloudkit.share"}}"#,
                    400, "rootRecord"
                ),
                (
                    #"{"zoneID":\#(lists),"participants":[],"shareRecordName":"cloudkit.zoneshare"}"#, 400,
                    "zone-wide share"
                ),
                (#"{"zoneID":\#(lists),"participants":[],"shareRecordName":"_mine"}"#, 400, "shareRecordName"),
                (#"{"zoneID":\#(lists),"participants":[],"rootRecord":\#(groceries)}"#, 409, "already exists"),
                (
                    #"{"zoneID":{"zoneName":"Nowhere","ownerName":"__defaultOwner__"},"participants":[],"rootRecord":{"recordID":{"recordName":"R","zoneID":{"zoneName":"Nowhere","ownerName":"__defaultOwner__"}},"recordType":"Item"}}"#,
                    404, "does not exist"
                ),
            ]
            for refusal in refusals {
                let answer = try await home.ada.send(.post, "/v1/shares/save", body: Data(refusal.body.utf8))
                #expect(answer.status == refusal.status, "\(refusal.body): \(answer.status) \(answer.error as Any)")
                #expect(
                    answer.error?.message.contains(refusal.says) == true,
                    "\(refusal.body): \(answer.error?.message ?? "no message")")
            }
            var elsewhere = Household.item("Stray", parent: nil)
            elsewhere.parent = .init(
                recordID: RecordValue.ID(recordName: "Milk", zoneID: RecordZone.ID(zoneName: "Other")))
            let parentElsewhere = try await home.ada.send(
                .post, "/v1/databases/private/records/modify",
                body: try JSONEncoder().encode(ModifyRecordsRequest(saves: [elsewhere])))
            #expect(parentElsewhere.status == 400)
            #expect(
                parentElsewhere.error?.message.contains("saves[0].parent: the parent must be a record of the same zone")
                    == true)
            #expect(try await home.ada.contents(of: Household.zone) == before, "nothing changed")
            let shares = try await home.ada.fetchAllZoneChanges(Household.zone).modifications.filter {
                $0.recordType == Share.recordType
            }
            #expect(shares.isEmpty)
        }
    }
}

extension RecordValue.ID {
    func withZone(_ zoneID: RecordZone.ID) -> RecordValue.ID {
        RecordValue.ID(recordName: recordName, zoneID: zoneID)
    }
}

extension TestClient {
    /// The shares of one of this user's zones, as the records of type `cloudkit.share` in it.
    func shares(_ zoneID: RecordZone.ID) async throws -> [RecordValue] {
        try await fetchAllZoneChanges(zoneID).modifications.filter { $0.recordType == Share.recordType }
    }
}
