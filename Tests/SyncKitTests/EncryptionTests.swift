import Foundation
import SyncCrypto
import SyncKit
import SyncServer
import SyncTesting
import Synchronization
import Testing

/// `encryptedValues` sealed on the device: the server and the network see only ciphertext, a
/// device with the passphrase reads everything, one without says so, and a reset starts over.
@Suite("encryptedValues: encrypted end to end")
struct EncryptionTests {
    static let zoneID = RecordZone.ID(zoneName: "Contacts")
    static let recordID = Record.ID(recordName: "ada", zoneID: zoneID)

    private func container(_ server: TestServer, passphrase: String?) -> Container {
        let configuration = ContainerConfiguration(
            serverURL: URL(string: server.baseURL)!, username: "ada", password: "correct horse", signUp: true)
        let signIn = Container(identifier: "iCloud.com.example.Contacts", configuration: configuration)
        return Container(
            identifier: "iCloud.com.example.Contacts", serverURL: signIn.serverURL, credentials: signIn.credentials,
            keyring: passphrase.map { TestDevice.keyring(passphrase: $0) })
    }

    @Test("the server's database file and the bytes on the wire hold only ciphertext; the record reads back whole")
    func ciphertextOnly() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let database = container(server, passphrase: TestDevice.passphrase).privateCloudDatabase
            try await database.save(RecordZone(zoneID: Self.zoneID))
            let secretName = "Augusta Ada King-\(UUID().uuidString)"
            let secretDate = Date(timeIntervalSinceReferenceDate: 123_456.789)
            let record = Record(recordType: "Contact", recordID: Self.recordID)
            record.encryptedValues["name"] = secretName
            record.encryptedValues["born"] = secretDate
            record["visible"] = "plain on purpose"
            _ = try await database.save(record)

            let fetched = try await database.record(for: Self.recordID)
            #expect(fetched.encryptedValues["name"] as? String == secretName)
            #expect(fetched.encryptedValues["born"] as? Date == secretDate)
            #expect(fetched["name"] == nil)

            let stored = try await server.storedBytes()
            #expect(stored.range(of: Data("plain on purpose".utf8)) != nil, "the check reads the right file")
            #expect(stored.range(of: Data(secretName.utf8)) == nil, "the server's file holds the plaintext name")
            #expect(stored.range(of: Data(TestDevice.passphrase.utf8)) == nil)

            // What any client (and the network) gets from the server: the raw answer to a fetch.
            let session = try await TestClient(baseURL: server.baseURL).signedIn(
                username: "ada", password: "correct horse")
            let raw = try await session.send(
                .post, "/v1/databases/private/records/changes",
                body: try JSONEncoder().encode(FetchZoneChangesRequest(zoneID: Self.zoneID, since: nil)))
            #expect(raw.status == 200)
            #expect(raw.body.range(of: Data(secretName.utf8)) == nil, "the wire carries the plaintext name")
            let onTheWire = try raw.decoded(as: FetchZoneChangesResponse.self).modifications.first
            #expect(onTheWire?.fields["name"]?.encryptedValue != nil)
            #expect(onTheWire?.fields["visible"]?.stringValue == "plain on purpose")
        }
    }

    @Test("a kept account key spares the next keyring scrypt; a wrong or stale one is never used")
    func keptAccountKey() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let kept = Mutex<[String: Data]>([:])
            let saves = Mutex(0)
            let derivedKeys = Keyring.DerivedKeys(
                load: { id in kept.withLock { $0[id] } },
                save: { id, key in
                    saves.withLock { $0 += 1 }
                    kept.withLock { $0[id] = key }
                })
            func keyring(_ passphrase: String) -> Keyring {
                Keyring(passphrase: passphrase, parameters: TestDevice.cheapScrypt, derivedKeys: derivedKeys)
            }
            let first = container(server, passphrase: TestDevice.passphrase).privateCloudDatabase
            try await first.save(RecordZone(zoneID: Self.zoneID))
            let database = Database(
                serverURL: first.serverURL, credentials: first.credentials, keyring: keyring(TestDevice.passphrase))

            try await keyring(TestDevice.passphrase).unlock(for: database)
            #expect(saves.withLock { $0 } == 1, "the first keyring derived the key and kept it")
            try await keyring(TestDevice.passphrase).unlock(for: database)
            #expect(saves.withLock { $0 } == 1, "the second used the kept key")

            // A wrong passphrase finds no kept key, derives, and is refused.
            await #expect(throws: SyncError.self) { try await keyring("not the passphrase").unlock(for: database) }
            // A kept key that does not verify is not used: the key is derived again and kept anew.
            kept.withLock { keys in for id in keys.keys { keys[id] = Data(repeating: 7, count: 32) } }
            let record = Record(recordType: "Contact", recordID: Self.recordID)
            record.encryptedValues["name"] = "Ada"
            _ = try await Database(
                serverURL: first.serverURL, credentials: first.credentials, keyring: keyring(TestDevice.passphrase)
            ).save(record)
            #expect(saves.withLock { $0 } == 2)
            let fetched = try await first.record(for: Self.recordID)
            #expect(fetched.encryptedValues["name"] as? String == "Ada")
        }
    }

    @Test("a second device with the passphrase reads everything; without it, or with a wrong one, it says so")
    func secondDevice() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let first = container(server, passphrase: TestDevice.passphrase).privateCloudDatabase
            try await first.save(RecordZone(zoneID: Self.zoneID))
            let record = Record(recordType: "Contact", recordID: Self.recordID)
            record.encryptedValues["name"] = "Ada"
            _ = try await first.save(record)

            let second = container(server, passphrase: TestDevice.passphrase).privateCloudDatabase
            #expect(try await second.record(for: Self.recordID).encryptedValues["name"] as? String == "Ada")

            let without = container(server, passphrase: nil).privateCloudDatabase
            let noKey = await #expect(throws: SyncError.self) { try await without.record(for: Self.recordID) }
            #expect(noKey?.code == .notAuthenticated)
            #expect(noKey?.message.contains("passphrase") == true)

            let wrong = container(server, passphrase: "not the passphrase").privateCloudDatabase
            let wrongKey = await #expect(throws: SyncError.self) { try await wrong.record(for: Self.recordID) }
            #expect(wrongKey?.code == .notAuthenticated)
            #expect(wrongKey?.message.contains("passphrase") == true)
            // Nor can it write: saving needs the same keys.
            let edit = Record(recordType: "Contact", recordID: Record.ID(recordName: "bob", zoneID: Self.zoneID))
            edit.encryptedValues["name"] = "Bob"
            await #expect(throws: SyncError.self) { try await wrong.save(edit) }
        }
    }

    @Test("two engines sync encryptedValues as Apple's sample does, and a reset is reported as encryptedDataReset")
    func engineAndReset() async throws {
        try await withDevices(2) { server, account, devices in
            let (a, b) = (devices[0], devices[1])
            a.engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: TestDevice.zoneID))])
            a.save(id: "ada", name: "Ada", date: Date(timeIntervalSinceReferenceDate: 1_000.000_1))
            try await a.engine.sendChanges()
            try await b.engine.fetchChanges()
            #expect(b.contacts.withLock { $0["ada"]?.name } == "Ada")
            #expect(
                b.contacts.withLock { $0["ada"]?.userModificationDate }
                    == Date(timeIntervalSinceReferenceDate: 1_000.000_1))

            // The passphrase is lost: reset from a container on the same account.
            let resetter = Container(
                identifier: "iCloud.com.example.Contacts", serverURL: URL(string: server.baseURL)!,
                credentials: .token(account.token!), keyring: TestDevice.keyring(passphrase: "a new passphrase"))
            try await resetter.resetEncryptedData()
            try await b.engine.fetchChanges()
            #expect(b.eventLog.withLock { $0 }.contains("fetchedDatabaseChanges"))
            #expect(b.zoneDeletionReasons.withLock { $0 } == [.encryptedDataReset])
            #expect(b.contacts.withLock { $0.isEmpty })
            let settings = try await account.send(.get, "/v1/account/encryption")
            #expect(settings.status == 404)

            // Starting over with the new passphrase works; the old one no longer opens anything.
            let fresh = TestDevice(
                name: "fresh", server: server, client: account,
                keyring: TestDevice.keyring(passphrase: "a new passphrase"))
            fresh.engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: TestDevice.zoneID))])
            fresh.save(id: "ada", name: "Ada again")
            try await fresh.engine.sendChanges()
            let stale = TestDevice(name: "stale", server: server, client: account)
            let error = await #expect(throws: SyncError.self) { try await stale.engine.fetchChanges() }
            #expect(error?.code == .notAuthenticated)
        }
    }
}
