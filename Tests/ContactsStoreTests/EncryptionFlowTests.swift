import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import GRDB
import SyncCore
import SyncTesting
import Testing

/// The contacts app keeps every personal field in `encryptedValues`: the server holds ciphertext only,
/// a device needs the account's passphrase, data from versions before encryption is encrypted on the
/// way, and a lost passphrase is recovered from by a reset.
@Suite("Contacts: every field encrypted")
struct EncryptionFlowTests {
    /// The contact records on the server, as any client (and the network) gets them.
    private func serverRecords(_ server: TestServer) async throws -> [RecordValue] {
        let client = try await TestClient(baseURL: server.baseURL).signedIn(username: "ada")
        return try await client.fetchAllZoneChanges(Contact.zoneID).modifications
    }

    private func secretContact() -> Contact {
        var contact = Contact(name: "Zelda Secretname-\(UUID().uuidString.prefix(8))")
        contact.emails = [LabeledValue(label: "home", value: "zelda.hidden@example.org")]
        contact.phones = [LabeledValue(label: "mobile", value: "+44 20 7946 0958")]
        contact.organization = "Hidden Org Ltd"
        contact.notes = "met at the quiet conference"
        return contact
    }

    @Test("the server's file and its answers hold no contact field in plaintext; the other device reads all of it")
    func ciphertextOnly() async throws {
        try await withContactsDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            let contact = try a.contacts.add(secretContact())
            try await a.sync()
            try await b.sync()
            #expect(try b.store.contact(contact.id) == contact)

            let stored = try await server.storedBytes()
            #expect(stored.range(of: Data("Contact".utf8)) != nil, "the check reads the right file")
            // Each long enough not to occur by chance: "7946" alone turned up once in the 400 KB of the server's
            // SQLite file and log, among numbers and base64 that had nothing to do with the contact.
            for secret in [
                contact.name, "zelda.hidden@example.org", "20 7946 0958", "Hidden Org", "quiet conference",
                testPassphrase,
            ] {
                #expect(stored.range(of: Data(secret.utf8)) == nil, "the server's file holds \(secret)")
            }
            let records = try await serverRecords(server)
            #expect(records.count == 1)
            for record in records {
                #expect(!record.fields.isEmpty)
                #expect(
                    record.fields.values.allSatisfy { $0.encryptedValue != nil },
                    "plain fields on the server: \(record.fields.filter { $0.value.encryptedValue == nil }.keys)")
            }
        }
    }

    @Test("signing in with a wrong passphrase is refused at once and leaves the device signed out")
    func wrongPassphrase() async throws {
        try await withContactsDevices(1) { server, directory, devices in
            try devices[0].contacts.add(secretContact())
            try await devices[0].sync()
            let other = try openDevice("other", directory: directory, server: server)
            let error = await #expect(throws: DeviceError.self) {
                try await other.account.signIn(username: "ada", password: "correct horse battery", passphrase: "not it")
            }
            #expect(error?.description.contains("passphrase does not open") == true, "\(String(describing: error))")
            #expect(!other.isSignedIn)
            #expect(try other.store.count() == 0)
        }
    }

    @Test(
        "a contact in plain on the server, as versions before encryption wrote it (or a forger), is refused, not adopted"
    )
    func refusesPlainServerData() async throws {
        try await withContactsDevices(1) { server, _, devices in
            let device = devices[0]
            // What an earlier version wrote: the zone, and a contact whose fields are plain strings. A forger with
            // the account's token writes the same: a device cannot tell them apart, so neither is adopted.
            let old = try await TestClient(baseURL: server.baseURL).signedIn(username: "ada")
            _ = try await old.saveZones(Contact.zoneID.zoneName)
            let id = UUID()
            var plain = RecordValue(
                recordType: Contact.recordType, recordID: .init(recordName: id.uuidString, zoneID: Contact.zoneID))
            plain["name"] = .string("Plain Olde")
            plain["emails"] = .string(
                #"[{"id":"e1","label":"work","modified":1700000000000,"value":"olde@example.org"}]"#)
            plain["nameModified"] = .date(Date(timeIntervalSince1970: 1_700_000_000))
            let saved = try await old.modifyRecords(ModifyRecordsRequest(saves: [plain]))
            #expect(saved.savedRecords.count == 1)

            try await device.sync()
            #expect(try device.store.contact(id) == nil)
            #expect(try device.store.tamperedRecords().map(\.recordName) == [id.uuidString])
            // Nothing was sent back: the server's copy is the plain one, as it was.
            let records = try await serverRecords(server)
            #expect(records.map(\.recordChangeTag) == saved.savedRecords.map(\.recordChangeTag))
        }
    }

    @Test("a store from a version before encryption queues its plain contacts once, and they go up encrypted")
    func migratesExistingStore() async throws {
        try await withContactsDevices(1) { server, directory, _ in
            var device: ContactsDevice? = try openDevice("old", directory: directory, server: server)
            try await device!.account.signIn(
                username: "ada", password: "correct horse battery", passphrase: testPassphrase)
            let id = try device!.contacts.add(Contact(name: "Stored Before")).id
            try await device!.sync()
            let path = device!.store.path
            device = nil
            // Make the store what an earlier version left: the server record kept bare with its fields in
            // plain, nothing pending, no migration done; and the server's copy plain as well.
            let old = try await TestClient(baseURL: server.baseURL).signedIn(username: "ada")
            var record = try #require(try await old.lookupRecords([Contact(id: id, name: "").recordID]).records.first)
            for key in record.fields.keys { record[key] = nil }
            record["name"] = .string("Stored Before")
            let saved = try #require(
                try await old.modifyRecords(ModifyRecordsRequest(saves: [record])).savedRecords.first)
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .millisecondsSince1970
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(sql: "DELETE FROM outbox")
                try db.execute(sql: "DELETE FROM setting WHERE key = 'encryptedFieldsMigrated'")
                try db.execute(
                    sql: "UPDATE serverRecord SET json = ? WHERE id = ?",
                    arguments: [try encoder.encode(saved), id])
            }
            try queue.close()

            var reopened: ContactsDevice? = try openDevice("old", directory: directory, server: server)
            #expect(try reopened!.store.pendingCount() == 1, "the plain contact is queued to be saved encrypted")
            try await reopened!.sync()
            #expect(try reopened!.store.pendingCount() == 0)
            #expect(try reopened!.store.contact(id)?.name == "Stored Before")
            let records = try await serverRecords(server)
            #expect(records.allSatisfy { $0.fields.values.allSatisfy { $0.encryptedValue != nil } }, "\(records)")
            // Once only: opening the store again queues nothing.
            reopened = nil
            let again = try openDevice("old", directory: directory, server: server)
            #expect(try again.store.pendingCount() == 0)
        }
    }

    @Test(
        "a lost passphrase: the reset uploads this device's contacts with a new one; the other device keeps its own and needs it"
    )
    func reset() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.contacts.add(Contact(name: "Kept By A"))
            try await a.sync()
            try await b.sync()
            try b.contacts.add(Contact(name: "Only On B"))

            try await a.account.resetEncryptedData(passphrase: "a brand new passphrase")
            #expect(try a.account.passphrase() == "a brand new passphrase")
            #expect(a.names == ["Kept By A"])

            // B hears of the reset, keeps its contacts, and cannot send with the old passphrase.
            await #expect(throws: (any Error).self) { try await b.sync() }
            #expect(b.names == ["Kept By A", "Only On B"])
            await #expect(throws: DeviceError.self) { try await b.account.setPassphrase(testPassphrase) }
            try await b.account.setPassphrase("a brand new passphrase")
            try await b.sync()
            try await a.sync()
            #expect(a.names == ["Kept By A", "Only On B"])
            #expect(b.names == ["Kept By A", "Only On B"])
        }
    }
}
