import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import Logging
import SyncCore
import SyncCrypto
import SyncServer
import SyncTesting
import Testing

/// A book shared before key pairs keeps working, and moves to them.
///
/// `Fixtures/shared-book-before-key-pairs` was made by the debug build of main at fd5f3b2 (before key
/// pairs and key chains) with its own SQLite server: `contacts --device ada account signup --username ada`,
/// the same for grace and bob (password `fixture-password`, passphrases `ada fixture passphrase`, `grace
/// fixture passphrase`, `bob fixture passphrase`), `--device ada book create Family`, `add --name Mum
/// --book Family`, `add --name "Uncle Charles" --book Family`, `book share Family --with grace`, the same
/// with bob, then `book accept INVITATION` on grace's and bob's devices. The zone's key is a single key of
/// format 1, the share holds it wrapped by the invitation's secret (format 2), and Grace's and Bob's own
/// slots hold it wrapped by their account keys (format 1); no account has a key pair.
@Suite("Upgrades: a book shared before key pairs")
struct ShareKeyUpgradeTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/shared-book-before-key-pairs")
    /// When the fixture was made: the server's clock starts there, so the devices' sessions are fresh.
    static let madeAt = Date(timeIntervalSince1970: 1_795_625_189)  // 2026-11-25 16:46:29 UTC
    static let ada = "_b9703edeff094e96afbbb85de3a3d29c"
    static let family = RecordZone.ID(zoneName: "book-909d5356-1377-49ae-bd4c-357bcdfffeba")
    static var sharedFamily: RecordZone.ID { RecordZone.ID(zoneName: family.zoneName, ownerName: ada) }

    @Test(
        "SQLite: Grace and Bob still read Family; Ada's next sync moves it to their public keys; after Bob stays and Grace is removed, what Ada writes opens with no key Grace ever held"
    )
    func sharedBookMovesToKeyPairs() async throws {
        try await withTemporaryDirectory { directory in
            try copyDevices(to: directory)
            let serverFile = directory + "/server.sqlite"
            try FileManager.default.copyItem(
                atPath: Self.fixture.appendingPathComponent("server.sqlite").path, toPath: serverFile)
            try await withServer(storagePath: serverFile) { server in
                try await check(server: server, directory: directory)
            }
        }
    }

    @Test(
        "PostgreSQL: the same fixture's rows at schema 7: Grace and Bob still read Family, Ada's next sync moves it to their public keys, and a removal keeps Grace out",
        .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
    func sharedBookMovesToKeyPairsOnPostgres() async throws {
        try await withTemporaryDirectory { directory in
            try copyDevices(to: directory)
            // The test server's database for this path: made here at schema 7 with the fixture's rows, then
            // opened (and migrated) by this version's server.
            let storagePath = directory + "/server-postgres"
            let name = TestPostgres.databaseName(for: storagePath)
            try await TestPostgres.createDatabase(name)
            do {
                try await SQLiteFixtureInPostgres.copy(
                    sqlite: Self.fixture.appendingPathComponent("server.sqlite").path,
                    toPostgres: try TestPostgres.url(database: name), version: 7,
                    logger: Logger(label: "upgrade-test"))
                try await TestServer.$backend.withValue(.postgres) {
                    try await withServer(storagePath: storagePath) { server in
                        try await check(server: server, directory: directory)
                    }
                }
                try await TestPostgres.dropDatabase(name)
            } catch {
                try? await TestPostgres.dropDatabase(name)
                throw error
            }
        }
    }

    private func copyDevices(to directory: String) throws {
        let devices = directory + "/devices"
        try FileManager.default.createDirectory(atPath: devices, withIntermediateDirectories: true)
        for name in ["ada", "grace", "bob"] {
            try FileManager.default.copyItem(
                atPath: Self.fixture.appendingPathComponent("\(name).sqlite").path, toPath: devices + "/\(name).sqlite")
        }
    }

    /// A server on `storagePath` whose clock starts when the fixture was made, stopped after `body`.
    private func withServer(storagePath: String, _ body: (TestServer) async throws -> Void) async throws {
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(TestClock(), startingAt: Self.madeAt)
        let server = try await TestServer.start(configuration: configuration, storagePath: storagePath)
        do {
            try await body(server)
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }

    private func check(server: TestServer, directory: String) async throws {
        let ada = try openDevice("ada", directory: directory, server: server)
        let grace = try openDevice("grace", directory: directory, server: server)
        let bob = try openDevice("bob", directory: directory, server: server)
        func family(_ device: ContactsDevice) throws -> [String] {
            try device.store.contacts(in: try device.store.resolveBook("Family").zoneID).map(\.name)
        }
        let adaClient = try await TestClient(baseURL: server.baseURL).signedIn(
            username: "ada", password: "fixture-password")
        let graceClient = try await TestClient(baseURL: server.baseURL).signedIn(
            username: "grace", password: "fixture-password")
        #expect(try await adaClient.listZones().first { $0.zoneID == Self.family }?.encryptionKey?.keyVersion == 1)

        // After the upgrade the participants read the book as before (and their accounts get key pairs).
        try await grace.sync()
        try await bob.sync()
        #expect(try family(grace) == ["Mum", "Uncle Charles"])
        #expect(try family(bob) == ["Mum", "Uncle Charles"])
        let users = try await adaClient.lookupUsers(["grace", "bob"]).users
        #expect(users.count == 2 && users.allSatisfy { $0.publicKey != nil })

        // Ada's next sync moves the share to the public-key wrapping: a new version, wrapped to each.
        try await ada.sync()
        let share = try await adaClient.fetchShare(Self.family)
        #expect(
            share.participants.filter { $0.role == .privateUser }.map(\.sharedKeyVersion) == [2, 2],
            "\(share.participants)")
        let zone = try #require(try await adaClient.listZones().first { $0.zoneID == Self.family })
        #expect(zone.encryptionKey?.keyVersion == 2)
        #expect(zone.encryptionKey?.wrappedKey.first == 3, "the owner's slot holds a chain")
        let adaKey = try #require(try await adaClient.lookupUsers(["ada"]).users.first?.publicKey)

        // Grace's device takes the new version in when a value needs it (pinning Ada's key, checked against
        // the key it held) and moves its own slot forward; both read what Ada writes now.
        try ada.contacts.add(Contact(name: "Cousin"), to: Self.family)
        try await ada.sync()
        try await grace.sync()
        try await bob.sync()
        #expect(try family(grace) == ["Cousin", "Mum", "Uncle Charles"])
        #expect(try family(bob) == ["Cousin", "Mum", "Uncle Charles"])
        let graceSlot = try await graceClient.listZones(scope: .shared).first { $0.zoneID == Self.sharedFamily }
        #expect(graceSlot?.encryptionKey?.keyVersion == 2)

        // Everything Grace could ever open with, kept before she is removed.
        let graceHeld = try await HeldKeys.chains(
            of: graceClient, passphrase: "grace fixture passphrase", zoneID: Self.sharedFamily, ownerPublicKey: adaKey)
        #expect(graceHeld.flatMap { $0.keys.map(\.version) }.max() == 2)

        try await ada.books.unshareBook(try ada.store.resolveBook("Family"), from: "grace")
        let eve = try ada.contacts.add(Contact(name: "Aunt Eve"), to: Self.family)
        try await ada.sync()
        let stored = try #require(try await adaClient.lookupRecords([eve.recordID(in: Self.family)]).records.first)
        let versions = try HeldKeys.versions(in: stored)
        #expect(versions == [3])
        for chain in graceHeld {
            #expect(chain.key(version: 3) == nil, "Grace held versions \(chain.keys.map(\.version))")
        }
        try await bob.sync()
        #expect(try family(bob) == ["Aunt Eve", "Cousin", "Mum", "Uncle Charles"])
        try await grace.sync()
        #expect(try grace.store.books().map(\.name) == ["Contacts"])
    }
}
