import Foundation
import SyncCore
import SyncKit
import SyncServer
import SyncTesting
import Synchronization
import Testing

/// A running engine whose account's passphrase is changed on another device: it holds the zone's key and
/// the old account key in memory, hears of the re-wrapped zone, and at its next use of the zone's key says
/// that the passphrase was changed (rather than that the zone's key does not open); its edit stays pending.
@Suite("SyncEngine: a passphrase changed on another device")
struct PassphraseChangeEngineTests {
    @Test("the running device says the passphrase changed and keeps its edit; the changer's records are untouched")
    func runningDeviceNotices() async throws {
        try await withDevices(2) { server, account, devices in
            let (a, b) = (devices[0], devices[1])
            a.engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: TestDevice.zoneID))])
            a.save(id: "ada", name: "Ada")
            try await a.engine.sendChanges()
            try await b.engine.fetchChanges()
            #expect(b.contacts.withLock { $0["ada"]?.name } == "Ada")
            let before = try await account.fetchAllZoneChanges(TestDevice.zoneID).modifications

            let changer = Container(
                identifier: "iCloud.com.example.Contacts", serverURL: URL(string: server.baseURL)!,
                credentials: .token(account.token!), keyring: TestDevice.keyring())
            let settings = try await changer.changePassphrase(to: "a new passphrase")
            #expect(settings.keyVersion == 2)
            #expect(try await account.fetchAllZoneChanges(TestDevice.zoneID).modifications == before)

            // B hears of the zone's new wrapping, then edits: the send says why it cannot seal.
            try await b.engine.fetchChanges()
            b.save(id: "grace", name: "Grace")
            let error = await #expect(throws: SyncError.self) { try await b.engine.sendChanges() }
            #expect(error?.code == .notAuthenticated && error?.reason == .passphraseRejected, "\(error as Any)")
            #expect(
                b.engine.state.pendingRecordZoneChanges.contains {
                    $0 == .saveRecord(Record.ID(recordName: "grace", zoneID: TestDevice.zoneID))
                }, "the edit stays pending")

            // A device with the new passphrase reads everything as it was.
            let fresh = TestDevice(
                name: "fresh", server: server, client: account,
                keyring: TestDevice.keyring(passphrase: "a new passphrase"))
            try await fresh.engine.fetchChanges()
            #expect(fresh.contacts.withLock { $0["ada"]?.name } == "Ada")
        }
    }
}
