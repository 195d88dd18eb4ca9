import Foundation
import SyncCore
import SyncCrypto
import SyncKit
import SyncTesting
import Testing

/// Removing a participant, a participant leaving and an explicit rotation each make a new version of
/// the zone's key: what the owner writes afterwards names a version the one who left never held, the
/// people who stay read it, and older values keep opening under their versions (nothing is sealed again).
@Suite("zone key rotation through the real server")
struct KeyRotationTests {
    private struct Setup {
        var server: TestServer
        var ada: TestClient
        var adaDevice: TestDevice
        var adaContainer: Container
        var adaID: String
        var sharedZone: RecordZone.ID { RecordZone.ID(zoneName: TestDevice.zoneID.zoneName, ownerName: adaID) }

        func passphrase(_ name: String) -> String { "\(name)'s own passphrase" }

        /// Someone else, signed in with their passphrase (which publishes their key pair).
        func person(_ name: String) async throws -> (client: TestClient, container: Container, id: String) {
            let client = try await TestClient(baseURL: server.baseURL).signedUp(username: name)
            let container = Container(
                identifier: "iCloud.com.example.Contacts", serverURL: URL(string: server.baseURL)!,
                credentials: .token(client.token!), deviceID: "\(name)-phone",
                keyring: TestDevice.keyring(passphrase: passphrase(name)))
            try await container.keyring?.unlock(for: container.privateCloudDatabase)
            return (client, container, try await client.account().userRecordName)
        }

        /// `name`'s engine on their shared database, syncing Ada's zone, with a keyring of its own.
        func sharedDevice(_ name: String, client: TestClient, device: String = "phone") -> TestDevice {
            TestDevice(
                name: "\(name)-\(device)", server: server, client: client,
                keyring: TestDevice.keyring(passphrase: passphrase(name)), scope: .shared, zone: sharedZone)
        }

        /// Ada's contact `id` as the server stores it.
        func stored(_ id: String) async throws -> RecordValue {
            try #require(try await ada.lookupRecords([TestDevice.recordID(id)]).records.first)
        }

        func adaPublicKey() async throws -> Data {
            try #require(try await ada.lookupUsers(["ada"]).users.first?.publicKey)
        }
    }

    private func withSetup(_ body: (Setup) async throws -> Void) async throws {
        try await TestServer.with(transport: .inProcess) { server in
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

    @Test(
        "after Ada removes Grace, what Ada writes opens with no key Grace ever held; Bob, who stays, reads it and everything older"
    )
    func removalRotates() async throws {
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
            #expect(graceDevice.names == ["Alan"])
            #expect(bobDevice.names == ["Alan"])

            // Everything Grace could ever open with: her own slot and the owner's wrap to her.
            let graceHeld = try await HeldKeys.chains(
                of: grace.client, passphrase: setup.passphrase("grace"), zoneID: setup.sharedZone,
                ownerPublicKey: try await setup.adaPublicKey())
            #expect(graceHeld.count == 2)
            let alanVersion = try HeldKeys.version(of: "name", in: try await setup.stored("alan"))
            #expect(graceHeld.allSatisfy { $0.key(version: alanVersion) != nil }, "the test's keys are really hers")

            // Ada removes Grace (keeps Bob).
            let (share, _) = try await setup.adaContainer.share(
                TestDevice.zoneID, with: [.init(userRecordName: bob.id, permission: .readWrite)])
            #expect(share.participants.map(\.username) == ["ada", "bob"])
            let newest = try #require(share.participants.first { $0.username == "bob" }?.sharedKeyVersion)
            #expect(newest > alanVersion)

            // Ada's laptop syncs as the app does (fetch, then send) and writes a new contact.
            try await setup.adaDevice.engine.fetchChanges()
            setup.adaDevice.save(id: "eve", name: "Eve", date: Date(timeIntervalSinceReferenceDate: 2_000))
            try await setup.adaDevice.engine.sendChanges()
            let eveVersion = try HeldKeys.version(of: "name", in: try await setup.stored("eve"))
            #expect(eveVersion == newest)
            for chain in graceHeld {
                #expect(chain.key(version: eveVersion) == nil, "Grace held versions \(chain.keys.map(\.version))")
            }
            #expect(try await grace.client.listZones(scope: .shared).isEmpty)

            // Bob's running device reads Eve (it learns the new version) and still reads Alan.
            try await bobDevice.engine.fetchChanges()
            #expect(bobDevice.names == ["Alan", "Eve"])
            let bobLater = setup.sharedDevice("bob", client: bob.client, device: "tablet")
            try await bobLater.engine.fetchChanges()
            #expect(bobLater.names == ["Alan", "Eve"])
            // Alan was not sealed again: older values keep their version.
            #expect(try HeldKeys.version(of: "name", in: try await setup.stored("alan")) == alanVersion)

            // Bob's edits still go back and merge as before the rotation.
            bobDevice.save(id: "alan", name: "Alan Turing", date: Date(timeIntervalSinceReferenceDate: 3_000))
            try await bobDevice.engine.sendChanges()
            try await setup.adaDevice.engine.fetchChanges()
            #expect(setup.adaDevice.names == ["Alan Turing", "Eve"])
            #expect(try HeldKeys.version(of: "name", in: try await setup.stored("alan")) == newest)
        }
    }

    @Test("Grace leaves: Ada's next upkeep makes a new version; another upkeep then changes nothing")
    func leaveRotatesAtTheOwnersNextUpkeep() async throws {
        try await withSetup { setup in
            let grace = try await setup.person("grace")
            let bob = try await setup.person("bob")
            let (_, invitation) = try await setup.adaContainer.share(
                TestDevice.zoneID,
                with: [
                    .init(userRecordName: grace.id, permission: .readOnly),
                    .init(userRecordName: bob.id, permission: .readOnly),
                ])
            try await grace.container.accept(invitation)
            try await bob.container.accept(invitation)
            let before = try await setup.adaContainer.updateZoneKeys(for: TestDevice.zoneID)
            #expect(before.rotated == false && before.wrappedTo.isEmpty, "nothing to do: \(before)")
            let held = try await HeldKeys.chains(
                of: grace.client, passphrase: setup.passphrase("grace"), zoneID: setup.sharedZone,
                ownerPublicKey: try await setup.adaPublicKey())

            // Grace leaves (deletes the zone from her shared database).
            _ = try await grace.client.modifyZones(
                ModifyZonesRequest(saves: [], deletes: [setup.sharedZone]), scope: .shared)
            let upkeep = try await setup.adaContainer.updateZoneKeys(for: TestDevice.zoneID)
            #expect(upkeep.rotated)
            #expect(upkeep.wrappedTo == [bob.id])
            let newest = try #require(upkeep.newestVersion)
            #expect(held.allSatisfy { $0.key(version: newest) == nil })
            let again = try await setup.adaContainer.updateZoneKeys(for: TestDevice.zoneID)
            #expect(again == .init(newestVersion: newest, rotated: false, wrappedTo: [], waitingForKeys: []))

            try await setup.adaDevice.engine.fetchChanges()
            setup.adaDevice.save(id: "eve", name: "Eve", date: Date(timeIntervalSinceReferenceDate: 2_000))
            try await setup.adaDevice.engine.sendChanges()
            #expect(try HeldKeys.version(of: "name", in: try await setup.stored("eve")) == newest)
            let bobDevice = setup.sharedDevice("bob", client: bob.client)
            try await bobDevice.engine.fetchChanges()
            #expect(bobDevice.names == ["Alan", "Eve"])
        }
    }

    @Test("rotateZoneKey makes a new version: a participant's running device reads new writes, and old values")
    func explicitRotation() async throws {
        try await withSetup { setup in
            let bob = try await setup.person("bob")
            let (_, invitation) = try await setup.adaContainer.share(
                TestDevice.zoneID, with: [.init(userRecordName: bob.id, permission: .readWrite)])
            try await bob.container.accept(invitation)
            let bobDevice = setup.sharedDevice("bob", client: bob.client)
            try await bobDevice.engine.fetchChanges()
            let alanVersion = try HeldKeys.version(of: "name", in: try await setup.stored("alan"))
            let before = try #require(try await setup.adaContainer.updateZoneKeys(for: TestDevice.zoneID).newestVersion)

            let rotation = try await setup.adaContainer.rotateZoneKey(for: TestDevice.zoneID)
            #expect(rotation.rotated)
            #expect(rotation.newestVersion == before + 1)
            #expect(rotation.wrappedTo == [bob.id])
            #expect(
                try await setup.adaContainer.invitation(
                    for: try #require(await setup.adaContainer.share(for: TestDevice.zoneID))) == invitation)

            try await setup.adaDevice.engine.fetchChanges()
            setup.adaDevice.save(id: "ida", name: "Ida", date: Date(timeIntervalSinceReferenceDate: 2_000))
            try await setup.adaDevice.engine.sendChanges()
            #expect(try HeldKeys.version(of: "name", in: try await setup.stored("ida")) == before + 1)
            try await bobDevice.engine.fetchChanges()
            #expect(bobDevice.names == ["Alan", "Ida"])
            #expect(try HeldKeys.version(of: "name", in: try await setup.stored("alan")) == alanVersion)
        }
    }

    /// A stolen token of the owner's (or the server itself) makes its own key pair, wraps a chain of its
    /// own to Bob and stores it as the owner's wrap: Bob's devices, holding Ada's pinned key, refuse it and
    /// keep the keys they have.
    @Test("a chain wrapped to Bob by anyone but the owner he pinned is refused; his keys stay as they were")
    func forgedWrapRefused() async throws {
        try await withSetup { setup in
            let bob = try await setup.person("bob")
            let (share, invitation) = try await setup.adaContainer.share(
                TestDevice.zoneID, with: [.init(userRecordName: bob.id, permission: .readWrite)])
            try await bob.container.accept(invitation)
            let bobKey = try #require(try await bob.client.lookupUsers(["bob"]).users.first?.publicKey)
            let held = try await HeldKeys.chains(
                of: bob.client, passphrase: setup.passphrase("bob"), zoneID: setup.sharedZone,
                ownerPublicKey: try await setup.adaPublicKey())

            let mallory = AccountIdentityKey.generate()
            let forgedChain = try ZoneKeyChain.generate().rotated().rotated()
            let forged = try forgedChain.wrapped(
                toParticipant: bobKey, by: mallory, ownerName: setup.adaID, participantName: bob.id,
                zoneName: TestDevice.zoneID.zoneName, shareToken: share.token)
            try await setup.ada.saveShare(
                SaveShareRequest(
                    zoneID: TestDevice.zoneID,
                    participants: [
                        .init(
                            userRecordName: bob.id, permission: .readWrite,
                            encryptionKey: .init(keyVersion: 3, wrappedKey: forged))
                    ]))
            let bobDevice = setup.sharedDevice("bob", client: bob.client)
            try await bobDevice.engine.fetchChanges()
            #expect(bobDevice.names == ["Alan"], "Bob keeps reading with the keys he has")
            // Bob's own slot still holds only Ada's keys: the forged chain was not taken in.
            let slot = try #require(try await bob.client.listZones(scope: .shared).first?.encryptionKey)
            #expect(slot.keyVersion == held.first?.newest.version)
            #expect(held.allSatisfy { !$0.agrees(with: forgedChain) })
        }
    }

    @Test("two of Ada's devices rotate at once: one version wins on the server, both end up with it, Bob reads it")
    func concurrentRotations() async throws {
        try await withSetup { setup in
            let bob = try await setup.person("bob")
            let (_, invitation) = try await setup.adaContainer.share(
                TestDevice.zoneID, with: [.init(userRecordName: bob.id, permission: .readWrite)])
            try await bob.container.accept(invitation)
            let before = try #require(try await setup.adaContainer.updateZoneKeys(for: TestDevice.zoneID).newestVersion)
            let phone = Container(
                identifier: "iCloud.com.example.Contacts", serverURL: URL(string: setup.server.baseURL)!,
                credentials: .token(setup.ada.token!), deviceID: "ada-phone", keyring: TestDevice.keyring())
            async let fromLaptop = setup.adaContainer.rotateZoneKey(for: TestDevice.zoneID)
            async let fromPhone = phone.rotateZoneKey(for: TestDevice.zoneID)
            let (laptop, phoneResult) = try await (fromLaptop, fromPhone)
            #expect(laptop.rotated && phoneResult.rotated)
            let newest = try #require(try await setup.ada.listZones().first?.encryptionKey?.keyVersion)
            #expect(newest > before)
            // Both devices' next upkeep agrees with the server and has nothing left to do.
            let settled = try await phone.updateZoneKeys(for: TestDevice.zoneID)
            #expect(settled.newestVersion == newest && !settled.rotated && settled.wrappedTo.isEmpty, "\(settled)")
            #expect(try await setup.adaContainer.updateZoneKeys(for: TestDevice.zoneID).newestVersion == newest)

            try await setup.adaDevice.engine.fetchChanges()
            setup.adaDevice.save(id: "ida", name: "Ida", date: Date(timeIntervalSinceReferenceDate: 2_000))
            try await setup.adaDevice.engine.sendChanges()
            #expect(try HeldKeys.version(of: "name", in: try await setup.stored("ida")) == newest)
            let bobDevice = setup.sharedDevice("bob", client: bob.client)
            try await bobDevice.engine.fetchChanges()
            #expect(bobDevice.names == ["Alan", "Ida"])
        }
    }

    @Test("a public link carries the link secret; after a rotation the old link opens nothing, the new one does")
    func linkShareRotation() async throws {
        try await withSetup { setup in
            let carol = try await setup.person("carol")
            let dan = try await setup.person("dan")
            let (share, link) = try await setup.adaContainer.share(
                TestDevice.zoneID, with: [], publicPermission: .readOnly)
            #expect(link.secret != nil, "a link share's keys open with the secret in the link")
            try await carol.container.accept(try ShareInvitation(link.description))
            let carolDevice = setup.sharedDevice("carol", client: carol.client)
            try await carolDevice.engine.fetchChanges()
            #expect(carolDevice.names == ["Alan"])

            try await setup.adaContainer.rotateZoneKey(for: TestDevice.zoneID)
            let newLink = try await setup.adaContainer.invitation(
                for: try #require(try await setup.adaContainer.share(for: TestDevice.zoneID)))
            #expect(newLink.token == share.token)
            #expect(newLink.secret != link.secret)
            let error = await #expect(throws: SyncError.self) {
                try await dan.container.accept(try ShareInvitation(link.description))
            }
            #expect(error?.code == .invalidArguments)
            try await dan.container.accept(try ShareInvitation(newLink.description))
            let danDevice = setup.sharedDevice("dan", client: dan.client)
            try await danDevice.engine.fetchChanges()
            #expect(danDevice.names == ["Alan"], "the new link opens every version, older ones included")
        }
    }
}
