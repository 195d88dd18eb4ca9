import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// Deleting an account, as its owner does with the password, and as the people it shared with
/// see it: the zones it shared leave their shared databases as a deletion they fetch, with a push;
/// its place in others' shares is left; its tokens are refused with `accountDeleted`.
@Suite("Account deletion", .onEveryBackend)
struct AccountDeletionTests {
    static let password = "correct horse battery"

    @Test("a participant sees the deleted account's book go, with a push; its tokens are refused; the name is free")
    func participantSeesDeletion() async throws {
        try await withServer(transport: .loopback) { server, anonymous in
            let accounts = AccountClient(serverURL: try #require(URL(string: server.baseURL)))
            var ada = try await anonymous.signedUp(username: "ada")
            ada.deviceID = "ada-laptop"
            let adaPhone = try await accounts.signIn(username: "ada", password: Self.password)
            var grace = try await anonymous.signedUp(username: "grace")
            grace.deviceID = "grace-phone"
            let adaID = try await ada.account().userRecordName
            let graceID = try await grace.account().userRecordName

            // Ada shares Family with Grace; Grace shares Garden with Ada.
            let family = RecordZone.ID(zoneName: "Family")
            try await ada.saveZones("Family")
            try await ada.save([contact("Alan", zone: family)])
            let share = try await ada.saveShare(
                SaveShareRequest(
                    zoneID: family, publicPermission: .none,
                    participants: [.init(userRecordName: graceID, permission: .readWrite)]))
            _ = try await grace.acceptShare(token: share.token)
            try await grace.saveZones("Garden")
            let garden = try await grace.saveShare(
                SaveShareRequest(
                    zoneID: RecordZone.ID(zoneName: "Garden"), publicPermission: .none,
                    participants: [.init(userRecordName: adaID, permission: .readOnly)]))
            _ = try await ada.acceptShare(token: garden.token)
            let before = try await grace.fetchDatabaseChanges(scope: .shared)
            #expect(before.modifications == [RecordZone.ID(zoneName: "Family", ownerName: adaID)])
            let graceSocket = try await grace.openPush()
            let adaPhoneSocket = try await TestClient(baseURL: server.baseURL, token: adaPhone.token).openPush()

            // The wrong password deletes nothing.
            let wrong = await syncError {
                try await accounts.deleteAccount(token: try #require(ada.token), password: "not it!!")
            }
            #expect(wrong?.code == .permissionFailure && wrong?.message.contains("nothing was deleted") == true)
            #expect(try await grace.listZones(scope: .shared).count == 1)

            try await accounts.deleteAccount(token: try #require(ada.token), password: Self.password)

            // Grace is told, and her shared database says the zone is gone.
            // (Her private database changed too: Ada left her Garden share.)
            let sharedChanged = PushMessage(event: .databaseChanged, scope: .shared)
            var heard: [PushMessage] = []
            while !heard.contains(sharedChanged), let next = await graceSocket.next() { heard.append(next.message) }
            #expect(heard.contains(sharedChanged), "\(heard)")
            let after = try await grace.fetchDatabaseChanges(since: before.changeToken, scope: .shared)
            #expect(after.deletions.map(\.zoneID) == [RecordZone.ID(zoneName: "Family", ownerName: adaID)])
            #expect(try await grace.listZones(scope: .shared).isEmpty)
            let lookup = await syncError {
                _ = try await grace.fetchZoneChanges(
                    RecordZone.ID(zoneName: "Family", ownerName: adaID), scope: .shared)
            }
            #expect(lookup?.code == .zoneNotFound)
            // Ada left Grace's share as if she had left it herself.
            let gardenNow = try await grace.fetchShare(RecordZone.ID(zoneName: "Garden"))
            #expect(gardenNow.participants.first { $0.userRecordName == adaID }?.acceptanceStatus == .removed)

            // Every token of Ada's is refused, saying why; her other device's socket closed.
            try await waitUntil("the other device's push socket closes") { adaPhoneSocket.isClosed }
            for token in [try #require(ada.token), adaPhone.token] {
                let refused = await syncError { _ = try await accounts.account(token: token) }
                #expect(refused?.code == .notAuthenticated && refused?.reason == .accountDeleted)
                #expect(refused?.message.contains("deleted") == true)
            }
            // Nothing of hers is left in the store, and her username is free.
            for table in ["zone", "share", "client_request"] {
                #expect(try await server.storedStrings("owner", in: table).filter { $0 == adaID }.isEmpty, "\(table)")
            }
            #expect(try await server.store.encryptionSettings(owner: adaID) == nil)
            let again = try await anonymous.signedUp(username: "ada")
            #expect(try await again.account().userRecordName != adaID)
            #expect(try await again.listZones().isEmpty)
            #expect(try await again.listZones(scope: .shared).isEmpty)
        }
    }
}
