import Foundation
import SyncCrypto
import SyncKit
import SyncServer
import SyncTesting
import Synchronization
import Testing

/// A passphrase change where keys are shared: the participant's own slot and key pair, and the owner's
/// zone chain and key pair, are wrapped again; with the new passphrases both read and write the shared zone
/// as before, and the participant's old passphrase opens nothing.
@Suite("Passphrase changes of a share's owner and participant")
struct PassphraseChangeSharingTests {
    @Test("after both change their passphrases, the share works with the new ones and not with the old")
    func shareSurvivesBothChanges() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let url = URL(string: server.baseURL)!
            let ada = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
            let adaDevice = TestDevice(name: "ada-laptop", server: server, client: ada)
            adaDevice.engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: TestDevice.zoneID))])
            adaDevice.save(id: "alan", name: "Alan", date: Date(timeIntervalSinceReferenceDate: 1_000))
            try await adaDevice.engine.sendChanges()
            let adaContainer = Container(
                identifier: "iCloud.com.example.Contacts", serverURL: url, credentials: .token(ada.token!),
                deviceID: "ada-laptop", keyring: TestDevice.keyring())
            let adaID = try await ada.account().userRecordName
            let sharedZone = RecordZone.ID(zoneName: TestDevice.zoneID.zoneName, ownerName: adaID)

            let grace = try await TestClient(baseURL: server.baseURL).signedUp(username: "grace")
            let graceContainer = Container(
                identifier: "iCloud.com.example.Contacts", serverURL: url, credentials: .token(grace.token!),
                deviceID: "grace-phone", keyring: TestDevice.keyring(passphrase: "grace's passphrase"))
            try await graceContainer.keyring?.unlock(for: graceContainer.privateCloudDatabase)
            let graceID = try await grace.account().userRecordName
            let (_, invitation) = try await adaContainer.share(
                TestDevice.zoneID, with: [.init(userRecordName: graceID, permission: .readWrite)])
            _ = try await graceContainer.accept(invitation)
            func graceDevice(_ name: String, passphrase: String) -> TestDevice {
                TestDevice(
                    name: name, server: server, client: grace, keyring: TestDevice.keyring(passphrase: passphrase),
                    scope: .shared, zone: sharedZone)
            }
            let before = graceDevice("grace-before", passphrase: "grace's passphrase")
            try await before.engine.fetchChanges()
            #expect(before.names == ["Alan"])
            let recordsBefore = try await ada.fetchAllZoneChanges(TestDevice.zoneID).modifications

            // Grace changes hers: her slot of Ada's zone and her key pair are wrapped again.
            let graceSettings = try await graceContainer.changePassphrase(to: "grace's new passphrase")
            #expect(graceSettings.keyVersion == 2 && graceSettings.keyPair != nil)
            let stale = graceDevice("grace-stale", passphrase: "grace's passphrase")
            let refused = await #expect(throws: SyncError.self) { try await stale.engine.fetchChanges() }
            #expect(refused?.reason == .passphraseRejected, "\(refused as Any)")

            // Ada changes hers: her zone's chain and her key pair are wrapped again.
            #expect(try await adaContainer.changePassphrase(to: "ada's new passphrase").keyVersion == 2)
            #expect(
                try await ada.fetchAllZoneChanges(TestDevice.zoneID).modifications == recordsBefore,
                "no record was sealed again")
            let adaNew = TestDevice(
                name: "ada-new", server: server, client: ada,
                keyring: TestDevice.keyring(passphrase: "ada's new passphrase"))
            try await adaNew.engine.fetchChanges()
            #expect(adaNew.names == ["Alan"])
            adaNew.save(id: "ida", name: "Ida", date: Date(timeIntervalSinceReferenceDate: 2_000))
            try await adaNew.engine.sendChanges()

            let graceNew = graceDevice("grace-new", passphrase: "grace's new passphrase")
            try await graceNew.engine.fetchChanges()
            #expect(graceNew.names == ["Alan", "Ida"])
            graceNew.save(id: "joan", name: "Joan", date: Date(timeIntervalSinceReferenceDate: 3_000))
            try await graceNew.engine.sendChanges()
            try await adaNew.engine.fetchChanges()
            #expect(adaNew.names == ["Alan", "Ida", "Joan"])
        }
    }
}
