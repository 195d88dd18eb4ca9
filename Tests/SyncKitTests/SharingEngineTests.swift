import Foundation
import SyncCrypto
import SyncKit
import SyncServer
import SyncTesting
import Synchronization
import Testing

/// Engines on the shared database, as CKSyncEngine apps run one per database: Ada shares her
/// encrypted Contacts zone, the people she invites accept it with the invitation alone (the zone's
/// key travels in it, never to the server) and sync it with their shared-scope engines.
@Suite("SyncEngine with the shared database")
struct SharingEngineTests {
    /// Ada, her laptop's engine and her container; the accounts she shares with.
    private struct Setup {
        var server: TestServer
        var ada: TestClient
        var adaDevice: TestDevice
        var adaContainer: Container
        var adaID: String
        var sharedZone: RecordZone.ID { RecordZone.ID(zoneName: TestDevice.zoneID.zoneName, ownerName: adaID) }

        /// Someone else: their account, their container (with their own passphrase) and user record name.
        func person(_ name: String) async throws -> (client: TestClient, container: Container, id: String) {
            let client = try await TestClient(baseURL: server.baseURL).signedUp(username: name)
            let container = Container(
                identifier: "iCloud.com.example.Contacts", serverURL: URL(string: server.baseURL)!,
                credentials: .token(client.token!), deviceID: "\(name)-phone",
                keyring: TestDevice.keyring(passphrase: "\(name)'s own passphrase"))
            // Signing in with the passphrase publishes the account's key pair, which sharing wraps keys to.
            try await container.keyring?.unlock(for: container.privateCloudDatabase)
            return (client, container, try await client.account().userRecordName)
        }

        /// `name`'s engine on their shared database, syncing Ada's zone.
        func sharedDevice(
            _ name: String, client: TestClient, device: String = "phone", credentials: Database.Credentials? = nil,
            automaticallySync: Bool = false
        ) -> TestDevice {
            TestDevice(
                name: "\(name)-\(device)", server: server, client: client, automaticallySync: automaticallySync,
                credentials: credentials, keyring: TestDevice.keyring(passphrase: "\(name)'s own passphrase"),
                scope: .shared, zone: sharedZone)
        }
    }

    private func withSetup(
        transport: TestServer.Transport = .inProcess, _ body: (Setup) async throws -> Void
    ) async throws {
        try await TestServer.with(transport: transport) { server in
            let ada = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
            let adaDevice = TestDevice(name: "ada-laptop", server: server, client: ada)
            adaDevice.engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: TestDevice.zoneID))])
            adaDevice.save(id: "alan", name: "Alan", date: Date(timeIntervalSinceReferenceDate: 1_000))
            try await adaDevice.engine.sendChanges()
            let container = Container(
                identifier: "iCloud.com.example.Contacts", serverURL: URL(string: server.baseURL)!,
                credentials: .token(ada.token!), deviceID: "ada-laptop", keyring: TestDevice.keyring())
            try await body(
                Setup(
                    server: server, ada: ada, adaDevice: adaDevice, adaContainer: container,
                    adaID: try await ada.account().userRecordName))
        }
    }

    @Test("Grace accepts Ada's invitation and syncs the encrypted zone both ways; removed, she sees it deleted")
    func shareAcceptSyncRemove() async throws {
        try await withSetup { setup in
            let grace = try await setup.person("grace")
            let (share, invitation) = try await setup.adaContainer.share(
                TestDevice.zoneID, with: [.init(userRecordName: grace.id, permission: .readWrite)])
            #expect(share.participants.map(\.username) == ["ada", "grace"])
            #expect(
                invitation.secret == nil,
                "the zone's keys are wrapped to Grace's public key, not carried in the invitation")
            #expect(try await setup.adaContainer.invitation(for: share) == invitation, "the same every time")

            // Grace has only the text Ada sent her.
            let received = try ShareInvitation(invitation.description)
            #expect(try await grace.container.shareMetadata(for: received).participantStatus == .pending)
            let metadata = try await grace.container.accept(received)
            #expect(metadata.participantStatus == .accepted)
            #expect(metadata.share.zoneID == setup.sharedZone)

            let graceDevice = setup.sharedDevice("grace", client: grace.client)
            try await graceDevice.engine.fetchChanges()
            #expect(graceDevice.names == ["Alan"])

            // What the server holds for Grace is ciphertext.
            let raw = try await grace.client.fetchAllZoneChanges(setup.sharedZone, scope: .shared)
            let alan = try #require(raw.modifications.first { $0.recordID.recordName == "alan" })
            #expect(alan.fields["name"]?.encryptedValue != nil)

            graceDevice.save(id: "alan", name: "Alan Turing", date: Date(timeIntervalSinceReferenceDate: 2_000))
            graceDevice.save(id: "joan", name: "Joan", date: Date(timeIntervalSinceReferenceDate: 2_000))
            try await graceDevice.engine.sendChanges()
            #expect(graceDevice.engine.state.pendingRecordZoneChanges.isEmpty)
            try await setup.adaDevice.engine.fetchChanges()
            #expect(setup.adaDevice.names == ["Alan Turing", "Joan"])

            setup.adaDevice.save(id: "ida", name: "Ida", date: Date(timeIntervalSinceReferenceDate: 3_000))
            try await setup.adaDevice.engine.sendChanges()
            try await graceDevice.engine.fetchChanges()
            #expect(graceDevice.names == ["Alan Turing", "Ida", "Joan"])

            // Ada stops sharing with Grace: Grace's engine reports the zone deleted.
            try await setup.adaContainer.share(TestDevice.zoneID, with: [])
            try await graceDevice.engine.fetchChanges()
            #expect(graceDevice.zoneDeletionReasons.withLock { $0 } == [.deleted])
            #expect(graceDevice.names.isEmpty)
            #expect(try await grace.container.sharedCloudDatabase.allRecordZones().isEmpty)
            #expect(setup.adaDevice.names == ["Alan Turing", "Ida", "Joan"], "Ada keeps everything")
        }
    }

    @Test(
        "Ada shares records and those below them: Grace's engine syncs just them, both ways; a record moved out, a share deleted, a root deleted, each leaves her"
    )
    func shareARecordHierarchy() async throws {
        try await withSetup { setup in
            let grace = try await setup.person("grace")
            let database = setup.adaContainer.privateCloudDatabase
            func contact(_ id: String, _ name: String, parent: Record? = nil) -> Record {
                let record = Record(recordType: "Contact", recordID: TestDevice.recordID(id))
                record.encryptedValues["name"] = name
                record.encryptedValues["userModificationDate"] = Date(timeIntervalSinceReferenceDate: 1_000)
                record.setParent(parent)
                return record
            }
            let family = try await database.save(contact("family", "Family"))
            let ida = try await database.save(contact("ida", "Ida", parent: family))
            #expect(ida.parent?.recordID == family.recordID)

            let (share, invitation) = try await setup.adaContainer.share(
                family, with: [.init(userRecordName: grace.id, permission: .readWrite)])
            #expect(share.rootRecordID == family.recordID)
            #expect(family.share?.recordID == share.recordID, "the root comes back with its share")
            #expect(try await setup.adaContainer.share(withID: share.recordID)?.participants.count == 2)
            let metadata = try await grace.container.accept(try ShareInvitation(invitation.description))
            #expect(metadata.hierarchicalRootRecordID?.recordName == "family")

            // Grace's engine gets the root and the record below it, not Alan.
            let graceDevice = setup.sharedDevice("grace", client: grace.client)
            try await graceDevice.engine.fetchChanges()
            #expect(graceDevice.names == ["Family", "Ida"])

            // Her edit goes back with the parent it came with (kept in the archived system fields).
            graceDevice.save(id: "ida", name: "Ida Rhodes", date: Date(timeIntervalSinceReferenceDate: 2_000))
            try await graceDevice.engine.sendChanges()
            try await setup.adaDevice.engine.fetchChanges()
            #expect(setup.adaDevice.names == ["Alan", "Family", "Ida Rhodes"])

            // Ada takes Ida out of the hierarchy: Grace's engine deletes her.
            let moved = try await database.record(for: TestDevice.recordID("ida"))
            moved.setParent(nil as Record?)
            _ = try await database.save(moved)
            try await graceDevice.engine.fetchChanges()
            #expect(graceDevice.names == ["Family"])

            // A second hierarchy of the zone, read-only; then Ada stops sharing the first: Grace's engine
            // sees the zone go and come back, and ends with just the second.
            let work = try await database.save(contact("work", "Work"))
            let (second, secondInvitation) = try await setup.adaContainer.share(
                work, with: [.init(userRecordName: grace.id, permission: .readOnly)])
            try await grace.container.accept(try ShareInvitation(secondInvitation.description))
            try await graceDevice.engine.fetchChanges()
            #expect(graceDevice.names == ["Family", "Work"])
            try await setup.adaContainer.deleteShare(withID: share.recordID)
            try await graceDevice.engine.fetchChanges()
            #expect(graceDevice.zoneDeletionReasons.withLock { $0 } == [.deleted])
            #expect(graceDevice.names == ["Work"])
            #expect(try await database.record(for: family.recordID).share == nil)
            #expect(try await setup.adaContainer.share(withID: share.recordID) == nil)

            // Ada deletes the second's root: the share goes with it, and the zone leaves Grace.
            _ = try await database.deleteRecord(withID: work.recordID)
            try await graceDevice.engine.fetchChanges()
            #expect(graceDevice.zoneDeletionReasons.withLock { $0 } == [.deleted, .deleted])
            #expect(graceDevice.names.isEmpty)
            #expect(try await setup.adaContainer.share(withID: second.recordID) == nil)
        }
    }

    @Test("two participants editing the same contact converge on the newer edit, as the sample's rule says")
    func twoParticipantsConverge() async throws {
        try await withSetup { setup in
            let grace = try await setup.person("grace")
            let bob = try await setup.person("bob")
            let (_, invitation) = try await setup.adaContainer.share(
                TestDevice.zoneID,
                with: [
                    .init(userRecordName: grace.id, permission: .readWrite),
                    .init(userRecordName: bob.id, permission: .readWrite),
                ])
            try await grace.container.accept(invitation)
            try await bob.container.accept(invitation)
            let graceDevice = setup.sharedDevice("grace", client: grace.client)
            let bobDevice = setup.sharedDevice("bob", client: bob.client)
            try await graceDevice.engine.fetchChanges()
            try await bobDevice.engine.fetchChanges()

            // Both edit Alan before hearing of the other's edit; Bob's is the newer.
            graceDevice.save(id: "alan", name: "Alan (Grace)", date: Date(timeIntervalSinceReferenceDate: 2_000))
            bobDevice.save(id: "alan", name: "Alan (Bob)", date: Date(timeIntervalSinceReferenceDate: 2_001))
            try await graceDevice.engine.sendChanges()
            // Bob's save conflicts; the sample's handler merges the server's record and queues it again.
            _ = try? await bobDevice.engine.sendChanges()
            try await bobDevice.engine.sendChanges()
            for device in [graceDevice, bobDevice, setup.adaDevice] {
                try await device.engine.fetchChanges()
                #expect(device.names == ["Alan (Bob)"], "\(device.name)")
            }
        }
    }

    @Test("a shared-database engine sends changes to zones of two owners, one request per owner")
    func twoOwners() async throws {
        try await withSetup { setup in
            let grace = try await setup.person("grace")
            let bob = try await setup.person("bob")
            // Bob shares a zone of his own with Grace too.
            let bobDevice = TestDevice(
                name: "bob-laptop", server: setup.server, client: bob.client,
                keyring: TestDevice.keyring(passphrase: "bob's own passphrase"))
            bobDevice.engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: TestDevice.zoneID))])
            bobDevice.save(id: "bobs-friend", name: "Bob's friend")
            try await bobDevice.engine.sendChanges()
            let (_, fromAda) = try await setup.adaContainer.share(
                TestDevice.zoneID, with: [.init(userRecordName: grace.id, permission: .readWrite)])
            let (_, fromBob) = try await bob.container.share(
                TestDevice.zoneID, with: [.init(userRecordName: grace.id, permission: .readWrite)])
            try await grace.container.accept(fromAda)
            try await grace.container.accept(fromBob)
            #expect(try await grace.container.sharedCloudDatabase.allRecordZones().count == 2)

            let graceDevice = setup.sharedDevice("grace", client: grace.client)
            try await graceDevice.engine.fetchChanges()
            #expect(graceDevice.names == ["Alan", "Bob's friend"])
            let bobsZone = RecordZone.ID(zoneName: TestDevice.zoneID.zoneName, ownerName: bob.id)
            graceDevice.save(id: "for-ada", name: "For Ada")
            graceDevice.contacts.withLock {
                $0["for-bob"] = TestDevice.Contact(
                    name: "For Bob", userModificationDate: Date(), lastKnownRecordData: nil)
            }
            graceDevice.engine.state.add(
                pendingRecordZoneChanges: [.saveRecord(Record.ID(recordName: "for-bob", zoneID: bobsZone))])
            try await graceDevice.engine.sendChanges()
            #expect(graceDevice.engine.state.pendingRecordZoneChanges.isEmpty)
            try await setup.adaDevice.engine.fetchChanges()
            try await bobDevice.engine.fetchChanges()
            #expect(setup.adaDevice.names == ["Alan", "For Ada"])
            #expect(bobDevice.names == ["Bob's friend", "For Bob"])
        }
    }

    @Test("signing out on one device stops its shared engine; the share, the zone and the other device carry on")
    func signOutStopsTheSharedEngine() async throws {
        try await withSetup(transport: .loopback) { setup in
            let grace = try await setup.person("grace")
            let (_, invitation) = try await setup.adaContainer.share(
                TestDevice.zoneID, with: [.init(userRecordName: grace.id, permission: .readWrite)])
            try await grace.container.accept(invitation)
            let store = CredentialStore(token: grace.client.token)
            let phone = setup.sharedDevice(
                "grace", client: grace.client, credentials: .store(store), automaticallySync: true)
            let laptop = setup.sharedDevice("grace", client: grace.client, device: "laptop")
            try await waitUntil("the phone's shared engine fetches Ada's zone by itself") {
                phone.names == ["Alan"]
            } observed: {
                "names \(phone.names); events \(phone.eventLog.withLock { $0 })"
            }

            store.token = nil
            try await waitUntil("the phone's shared engine sees the sign-out") {
                phone.eventLog.withLock { $0 }.filter { $0 == "accountChange" }.count == 2
            } observed: {
                "events \(phone.eventLog.withLock { $0 })"
            }
            // Signed out, it sends nothing, even asked to.
            phone.save(id: "while-out", name: "Written while signed out")
            try await phone.engine.sendChanges()
            try await setup.adaDevice.engine.fetchChanges()
            #expect(setup.adaDevice.names == ["Alan"])

            // Signing out on the phone is not leaving the share: Grace's laptop syncs on.
            try await laptop.engine.fetchChanges()
            #expect(laptop.names == ["Alan"])
            laptop.save(id: "from-laptop", name: "From the laptop")
            try await laptop.engine.sendChanges()
            try await setup.adaDevice.engine.fetchChanges()
            #expect(setup.adaDevice.names == ["Alan", "From the laptop"])
            #expect(
                try await setup.adaContainer.share(for: TestDevice.zoneID)?.participants.map(\.acceptanceStatus)
                    == [.accepted, .accepted])
            await phone.engine.cancelOperations()
        }
    }
}
