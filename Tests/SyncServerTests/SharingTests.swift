import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

private let familyZone = RecordZone.ID(zoneName: "Family")

@Suite("Sharing a zone: invitations, participants, the shared database", .onEveryBackend)
struct SharingTests {
    /// Ada has a Family zone (shared below) with one contact, and a Private zone she never shares.
    private func setUp(_ people: SharingPeople) async throws {
        try await people.ada.saveZones("Family", "Private")
        try await people.ada.save([
            contact("Alan", zone: familyZone), contact("Secret", zone: RecordZone.ID(zoneName: "Private")),
        ])
    }

    private func share(
        _ people: SharingPeople, grace: ShareParticipant.Permission? = .readWrite,
        bob: ShareParticipant.Permission? = nil,
        publicPermission: ShareParticipant.Permission = .none
    ) async throws -> Share {
        var invitees: [SaveShareRequest.Invitee] = []
        if let grace { invitees.append(.init(userRecordName: people.graceID, permission: grace)) }
        if let bob { invitees.append(.init(userRecordName: people.bobID, permission: bob)) }
        return try await people.ada.saveShare(
            SaveShareRequest(zoneID: familyZone, publicPermission: publicPermission, participants: invitees))
    }

    @Test("Ada shares a zone with Grace, who accepts it: it appears in her shared database and edits go both ways")
    func shareAndAccept() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople(anonymous)
            try await setUp(people)
            let lookup = try await people.ada.lookupUsers(["grace", "nobody"])
            #expect(lookup.users.map(\.userRecordName) == [people.graceID])
            #expect(lookup.failures.map(\.error.code) == [.unknownItem])

            let share = try await share(people)
            #expect(share.participants.map(\.username) == ["ada", "grace"])
            #expect(share.participants.map(\.acceptanceStatus) == [.accepted, .pending])
            #expect(try await people.grace.listZones(scope: .shared).isEmpty, "nothing shows before accepting")

            let metadata = try await people.grace.shareMetadata(token: share.token)
            #expect(metadata.ownerIdentity.username == "ada")
            #expect(metadata.share.zoneID == people.family)
            #expect(metadata.participantStatus == .pending && metadata.participantPermission == .readWrite)
            let accepted = try await people.grace.acceptShare(token: share.token)
            #expect(accepted.participantStatus == .accepted)

            #expect(try await people.grace.listZones(scope: .shared).map(\.zoneID) == [people.family])
            let changes = try await people.grace.fetchDatabaseChanges(scope: .shared)
            #expect(changes.modifications == [people.family] && changes.deletions.isEmpty)
            let fetched = try await people.grace.fetchAllZoneChanges(people.family, scope: .shared)
            #expect(Set(fetched.modifications.map(\.recordID.recordName)) == ["Alan", Share.zoneWideRecordName])
            #expect(fetched.modifications.allSatisfy { $0.recordID.zoneID == people.family })
            let shareRecord = try #require(fetched.modifications.first { $0.recordType == Share.recordType })
            #expect(shareRecord["participants"]?.listValue?.count == 2)

            // Grace adds a contact; Ada finds it in her own zone, made by Grace.
            let saved = try await people.grace.modifyRecords(
                ModifyRecordsRequest(saves: [contact("Ida", zone: people.family)]), scope: .shared)
            #expect(saved.failedRecordSaves.isEmpty, "\(saved.failedRecordSaves)")
            #expect(saved.savedRecords.first?.recordID.zoneID == people.family)
            let ada = try await people.ada.contents(of: familyZone)
            #expect(ada["Ida"]?.lastModifiedUserRecordID?.recordName == people.graceID)
            #expect(ada["Ida"]?["name"] == "Ida")

            // Ada's edit reaches Grace after her token.
            try await people.ada.save([contact("Ada's niece", zone: familyZone)])
            let after = try await people.grace.fetchAllZoneChanges(people.family, since: fetched.token, scope: .shared)
            #expect(after.modifications.map(\.recordID.recordName).contains("Ada's niece"))
            #expect(after.modifications.map(\.recordID.recordName).contains("Ida"))
            let dbAfter = try await people.grace.fetchDatabaseChanges(since: changes.changeToken, scope: .shared)
            #expect(dbAfter.modifications == [people.family], "the zone changed since her last database fetch")
            let quiet = try await people.grace.fetchDatabaseChanges(since: dbAfter.changeToken, scope: .shared)
            #expect(quiet.modifications.isEmpty && quiet.deletions.isEmpty)

            #expect(
                try await people.ada.fetchShare(familyZone).participants.map(\.acceptanceStatus) == [
                    .accepted, .accepted,
                ])
        }
    }

    @Test(
        "invitations: each invitee lists only their own waiting ones; a decline is for good; the owner, someone who accepted, a stranger and a forged token cannot decline"
    )
    func invitationsAndDecline() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople(anonymous)
            try await setUp(people)
            func waiting(_ client: TestClient) async throws -> [String] {
                try await client.call(.invitations, as: InvitationsResponse.self).invitations.map(\.share.token)
            }
            func decline(_ client: TestClient, _ token: String) async -> SyncError.Code? {
                do {
                    let _: [String: String] = try await client.call(.declineShare, ShareTokenRequest(token: token))
                    return nil
                } catch let error as SyncError {
                    return error.code
                } catch {
                    return .internalError
                }
            }
            let share = try await share(people, grace: .readWrite, bob: .readOnly)
            #expect(try await waiting(people.grace) == [share.token])
            #expect(try await waiting(people.bob) == [share.token])
            #expect(try await waiting(people.eve).isEmpty, "a stranger sees nobody's invitations")
            #expect(try await waiting(people.ada).isEmpty, "an owner is not invited to her own share")
            let listed = try await people.grace.call(.invitations, as: InvitationsResponse.self).invitations
            #expect(listed.first?.ownerIdentity.username == "ada")
            #expect(listed.first?.participantPermission == .readWrite)

            #expect(await decline(people.ada, share.token) == .invalidArguments, "the owner deletes the share instead")
            #expect(await decline(people.eve, share.token) == .unknownItem, "a stranger learns nothing")
            #expect(await decline(people.grace, "AAAAAAAAAAAAAAAAAAAAAA") == .unknownItem)
            #expect(await decline(people.grace, "../../etc/passwd") == .unknownItem)

            // Bob declines: his invitation is gone, and the token no longer opens the share for him.
            #expect(await decline(people.bob, share.token) == nil)
            #expect(try await waiting(people.bob).isEmpty)
            #expect(await decline(people.bob, share.token) == .unknownItem)
            await #expect(throws: SyncError.self) { try await people.bob.acceptShare(token: share.token) }
            await #expect(throws: SyncError.self) { try await people.bob.shareMetadata(token: share.token) }
            let after = try await people.ada.fetchShare(familyZone)
            #expect(after.participants.first { $0.username == "bob" }?.acceptanceStatus == .removed)

            // Grace accepts; declining afterwards is refused (she leaves instead), and she is listed no more.
            try await people.grace.acceptShare(token: share.token)
            #expect(try await waiting(people.grace).isEmpty)
            #expect(await decline(people.grace, share.token) == .invalidArguments)
            #expect(try await people.grace.listZones(scope: .shared).map(\.zoneID) == [people.family])

            // Invited again by the owner, Bob is waiting again.
            _ = try await self.share(people, grace: .readWrite, bob: .readOnly)
            #expect(try await waiting(people.bob) == [share.token])
        }
    }

    @Test("a read-only participant reads everything and changes nothing")
    func readOnly() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople(anonymous)
            try await setUp(people)
            let share = try await share(people, grace: .readOnly)
            try await people.grace.acceptShare(token: share.token)
            let before = try await people.ada.contents(of: familyZone)

            var edited = try #require(
                try await people.grace.fetchAllZoneChanges(people.family, scope: .shared)
                    .modifications.first { $0.recordID.recordName == "Alan" })
            edited["name"] = "changed"
            let response = try await people.grace.modifyRecords(
                ModifyRecordsRequest(
                    saves: [edited, contact("New", zone: people.family)],
                    deletes: [RecordValue.ID(recordName: Share.zoneWideRecordName + "x", zoneID: people.family)]),
                scope: .shared)
            #expect(response.failedRecordSaves.map(\.error.code) == [.permissionFailure, .permissionFailure])
            #expect(response.failedRecordDeletes.map(\.error.code) == [.permissionFailure])
            #expect(response.savedRecords.isEmpty && response.deletedRecordIDs.isEmpty)
            #expect(try await people.ada.contents(of: familyZone) == before)
        }
    }

    @Test("a participant who leaves, or whom the owner removes, loses the zone: a deletion they fetch, then nothing")
    func leaveAndRemove() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople(anonymous)
            try await setUp(people)
            let share = try await share(people, bob: .readWrite)
            try await people.grace.acceptShare(token: share.token)
            try await people.bob.acceptShare(token: share.token)
            let graceToken = try await people.grace.fetchDatabaseChanges(scope: .shared).changeToken
            let bobToken = try await people.bob.fetchDatabaseChanges(scope: .shared).changeToken

            // Grace leaves by deleting the zone from her shared database.
            let left = try await people.grace.modifyZones(ModifyZonesRequest(deletes: [people.family]), scope: .shared)
            #expect(left.deletedZoneIDs == [people.family])
            let graceChanges = try await people.grace.fetchDatabaseChanges(since: graceToken, scope: .shared)
            #expect(graceChanges.deletions.map(\.zoneID) == [people.family])
            #expect(
                await syncError { _ = try await people.grace.fetchZoneChanges(people.family, scope: .shared) }?.code
                    == .zoneNotFound)
            #expect(
                try await people.ada.fetchShare(familyZone).participants.map(\.acceptanceStatus) == [
                    .accepted, .removed, .accepted,
                ])
            #expect(
                await syncError { try await people.grace.acceptShare(token: share.token) }?.code == .unknownItem,
                "someone who left needs a new invitation")

            // Ada removes Bob by saving the share without him.
            _ = try await self.share(people, grace: nil, bob: nil)
            let bobChanges = try await people.bob.fetchDatabaseChanges(since: bobToken, scope: .shared)
            #expect(bobChanges.deletions.map(\.zoneID) == [people.family])
            let write = try await people.bob.modifyRecords(
                ModifyRecordsRequest(saves: [contact("Late", zone: people.family)]), scope: .shared)
            #expect(write.failedRecordSaves.map(\.error.code) == [.zoneNotFound])
            #expect(try await people.ada.contents(of: familyZone)["Late"] == nil)

            // Inviting Grace again makes her pending, and she can come back.
            _ = try await self.share(people)
            #expect(try await people.grace.shareMetadata(token: share.token).participantStatus == .pending)
            try await people.grace.acceptShare(token: share.token)
            #expect(try await people.grace.listZones(scope: .shared).map(\.zoneID) == [people.family])
        }
    }

    @Test("the owner deletes the share: every participant loses the zone, the owner keeps it, the URL opens nothing")
    func ownerDeletesShare() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople(anonymous)
            try await setUp(people)
            let share = try await share(people, bob: .readOnly)
            try await people.grace.acceptShare(token: share.token)
            try await people.bob.acceptShare(token: share.token)
            let token = try await people.grace.fetchDatabaseChanges(scope: .shared).changeToken
            let adaToken = try await people.ada.fetchAllZoneChanges(familyZone).token

            try await people.ada.deleteShare(familyZone)
            #expect(
                try await people.grace.fetchDatabaseChanges(since: token, scope: .shared).deletions.map(\.zoneID) == [
                    people.family
                ])
            #expect(try await people.bob.listZones(scope: .shared).isEmpty)
            #expect(
                await syncError { _ = try await people.grace.shareMetadata(token: share.token) }?.code == .unknownItem)
            #expect(await syncError { _ = try await people.ada.fetchShare(familyZone) }?.code == .unknownItem)
            let adaChanges = try await people.ada.fetchAllZoneChanges(familyZone, since: adaToken)
            #expect(adaChanges.deletions.map(\.recordID.recordName) == [Share.zoneWideRecordName])
            #expect(try await people.ada.contents(of: familyZone)["Alan"] != nil)
            try await people.ada.deleteShare(familyZone)  // again: nothing to delete, and that is fine
        }
    }

    @Test("deleting the shared zone takes it from every participant")
    func ownerDeletesZone() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople(anonymous)
            try await setUp(people)
            let share = try await share(people)
            try await people.grace.acceptShare(token: share.token)
            let token = try await people.grace.fetchDatabaseChanges(scope: .shared).changeToken
            _ = try await people.ada.modifyZones(ModifyZonesRequest(deletes: [familyZone]))
            #expect(
                try await people.grace.fetchDatabaseChanges(since: token, scope: .shared).deletions.map(\.zoneID) == [
                    people.family
                ])
            // A new zone of the same name is not shared.
            try await people.ada.saveZones("Family")
            #expect(try await people.grace.listZones(scope: .shared).isEmpty)
            #expect(
                await syncError { _ = try await people.grace.shareMetadata(token: share.token) }?.code == .unknownItem)
        }
    }

    @Test("a stranger, with a guessed or a real URL, gets nothing: the same answer as for no share at all")
    func stranger() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople(anonymous)
            try await setUp(people)
            let share = try await share(people)
            let guessed = String(repeating: "A", count: 22)
            for token in [guessed, share.token, "not a token", ""] {
                let metadata = await syncError { _ = try await people.eve.shareMetadata(token: token) }
                #expect(metadata?.code == .unknownItem, "\(token)")
                let accept = await syncError { try await people.eve.acceptShare(token: token) }
                #expect(accept?.code == .unknownItem, "\(token)")
                #expect(metadata?.message == accept?.message)
            }
            #expect(try await people.eve.listZones(scope: .shared).isEmpty)
            #expect(
                await syncError { _ = try await people.eve.fetchZoneChanges(people.family, scope: .shared) }?.code
                    == .zoneNotFound)
            #expect(try await people.ada.fetchShare(familyZone).participants.count == 2, "Eve was not added")
        }
    }

    @Test("a link share lets anyone with the URL join as a public user, with the public permission")
    func publicLink() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople(anonymous)
            try await setUp(people)
            let share = try await share(people, grace: nil, publicPermission: .readOnly)
            let metadata = try await people.eve.shareMetadata(token: share.token)
            #expect(metadata.participantRole == .publicUser && metadata.participantPermission == .readOnly)
            try await people.eve.acceptShare(token: share.token)
            #expect(try await people.eve.fetchAllZoneChanges(people.family, scope: .shared).modifications.count == 2)
            let write = try await people.eve.modifyRecords(
                ModifyRecordsRequest(saves: [contact("Eve was here", zone: people.family)]), scope: .shared)
            #expect(write.failedRecordSaves.map(\.error.code) == [.permissionFailure])
            // Closing the link removes those who came through it.
            _ = try await self.share(people, grace: nil, publicPermission: .none)
            #expect(try await people.eve.listZones(scope: .shared).isEmpty)
        }
    }

    @Test("bad share requests are refused whole, with what to do")
    func badRequests() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople(anonymous)
            try await setUp(people)
            func refusal(_ request: SaveShareRequest) async -> SyncError? {
                await syncError { _ = try await people.ada.saveShare(request) }
            }
            let many = (0..<Share.maximumParticipants).map {
                SaveShareRequest.Invitee(userRecordName: "_user\($0)", permission: .readOnly)
            }
            #expect(
                await refusal(SaveShareRequest(zoneID: familyZone, participants: many))?.code == .tooManyParticipants)
            #expect(
                await refusal(
                    SaveShareRequest(
                        zoneID: familyZone, participants: [.init(userRecordName: "_nobody", permission: .readOnly)]))?
                    .code == .unknownItem)
            #expect(
                await refusal(
                    SaveShareRequest(
                        zoneID: familyZone, participants: [.init(userRecordName: people.adaID, permission: .readOnly)]))?
                    .code == .invalidArguments)
            #expect(
                await refusal(
                    SaveShareRequest(
                        zoneID: familyZone, participants: [.init(userRecordName: people.graceID, permission: .none)]))?
                    .code == .invalidArguments)
            #expect(
                await refusal(SaveShareRequest(zoneID: RecordZone.ID(zoneName: "Nowhere"), participants: []))?.code
                    == .zoneNotFound)
            #expect(
                await refusal(
                    SaveShareRequest(
                        zoneID: RecordZone.ID(zoneName: "Family", ownerName: people.graceID), participants: []))?.code
                    == .permissionFailure)
            #expect(await syncError { _ = try await people.ada.fetchShare(familyZone) }?.code == .unknownItem)

            // Shares are not written as records.
            var forged = RecordValue(
                recordType: "Contact",
                recordID: RecordValue.ID(recordName: Share.zoneWideRecordName, zoneID: familyZone))
            forged["participants"] = .list([.string("{}")])
            #expect(
                await syncError { _ = try await people.ada.modifyRecords(ModifyRecordsRequest(saves: [forged])) }?.code
                    == .invalidArguments)

            // One owner per shared-database request.
            let share = try await share(people)
            try await people.grace.acceptShare(token: share.token)
            try await people.grace.saveZones("Mine")
            let mixed = ModifyRecordsRequest(saves: [
                contact("A", zone: people.family),
                contact("B", zone: RecordZone.ID(zoneName: "Mine", ownerName: people.graceID)),
            ])
            #expect(
                await syncError { _ = try await people.grace.modifyRecords(mixed, scope: .shared) }?.code
                    == .invalidArguments)
            #expect(await syncError { try await people.ada.acceptShare(token: share.token) }?.code == .invalidArguments)
        }
    }

    @Test("push: participants hear of the owner's writes and of each other's; the owner hears of theirs")
    func push() async throws {
        try await withServer(transport: .loopback) { server, anonymous in
            let people = try await SharingPeople(anonymous)
            try await setUp(people)
            let share = try await share(people, bob: .readWrite)
            try await people.grace.acceptShare(token: share.token)
            try await people.bob.acceptShare(token: share.token)
            let adaPush = try await people.ada.openPush()
            let gracePush = try await people.grace.openPush()
            let bobPush = try await people.bob.openPush()
            defer {
                for push in [adaPush, gracePush, bobPush] { push.close() }
            }

            try await people.ada.save([contact("From Ada", zone: familyZone)])
            #expect(await gracePush.next()?.message.scope == .shared)
            #expect(await bobPush.next()?.message.scope == .shared)

            _ = try await people.grace.modifyRecords(
                ModifyRecordsRequest(saves: [contact("From Grace", zone: people.family)]), scope: .shared)
            #expect(await adaPush.next()?.message.scope == .private)
            #expect(await bobPush.next()?.message.scope == .shared)

            // Bob's write reaches Grace too: participants hear of each other.
            _ = try await people.bob.modifyRecords(
                ModifyRecordsRequest(saves: [contact("From Bob", zone: people.family)]), scope: .shared)
            #expect(await gracePush.next()?.message.scope == .shared)

            // Ada's zone that is shared with nobody: a write there reaches no participant, nor Eve.
            let evePush = try await people.eve.openPush()
            defer { evePush.close() }
            try await people.ada.save([contact("Quiet", zone: RecordZone.ID(zoneName: "Private"))])
            for (name, client, push) in [
                ("grace", people.grace, gracePush), ("bob", people.bob, bobPush), ("eve", people.eve, evePush),
            ] {
                try await server.sendPushMarker(to: client)
                #expect(try await push.messagesBeforeMarker() == [], "\(name)")
            }
        }
    }
}
