import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncCore
import SyncTesting
import Testing

/// A hostile server (or anyone holding the account's token) writes records through the API: forged in
/// plain, sealed values moved between records, fields, zones and record types, an earlier ciphertext served
/// again. Each time the device keeps its own contact, lists the record as tampered, and sends nothing back.
@Suite("Contacts: forged and rolled-back records refused")
struct TamperTests {
    /// The sealed fields of a contact's record: the whole contact, and the device that saved it.
    static let contactField = "contact"
    static let deviceField = "device"

    /// The account's token in an attacker's hands: the raw API, as the server itself could write.
    private func attacker(_ server: TestServer) async throws -> TestClient {
        try await TestClient(baseURL: server.baseURL).signedIn(username: "ada")
    }

    /// The server's copy of a contact's record.
    private func serverRecord(_ client: TestClient, _ contact: Contact, in zoneID: RecordZone.ID = Contact.zoneID)
        async throws -> RecordValue
    {
        try #require(try await client.lookupRecords([contact.recordID(in: zoneID)]).records.first)
    }

    /// Saves `record` over the server's copy (its change tag is the server's, so the save goes through), as a
    /// hostile server would; returns what the server stored.
    private func overwrite(_ client: TestClient, _ record: RecordValue) async throws -> RecordValue {
        let response = try await client.modifyRecords(ModifyRecordsRequest(saves: [record]))
        #expect(response.failedRecordSaves.isEmpty, "\(response.failedRecordSaves)")
        return try #require(response.savedRecords.first)
    }

    /// What a hostile server does with `record`: its user fields replaced by `fields`.
    private func replacingFields(of record: RecordValue, with fields: [String: FieldValue]) -> RecordValue {
        var forged = record
        for key in record.fields.keys { forged[key] = nil }
        for (key, value) in fields { forged[key] = value }
        return forged
    }

    /// After `device` synced: it still holds `expected`, lists `recordName` as refused for `reason`, has
    /// nothing to send, and the server's record is still the one the attacker stored (`stored`), not re-sealed.
    private func expectRefused(
        _ device: ContactsDevice, keeps expected: Contact, recordName: String, reason: String, stored: RecordValue,
        client: TestClient, in zoneID: RecordZone.ID = Contact.zoneID, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        #expect(try device.store.contact(expected.id) == expected, sourceLocation: sourceLocation)
        let refused = try device.store.tamperedRecords()
        #expect(
            refused.map { "\($0.recordName) \($0.reason)" } == ["\(recordName) \(reason)"],
            "\(refused.map(\.message))", sourceLocation: sourceLocation)
        #expect(try device.store.pendingCount() == 0, "nothing to send back", sourceLocation: sourceLocation)
        let now = try #require(
            try await client.lookupRecords([RecordValue.ID(recordName: recordName, zoneID: zoneID)]).records.first)
        #expect(
            now.recordChangeTag == stored.recordChangeTag, "the server's record was not re-saved",
            sourceLocation: sourceLocation)
    }

    @Test("Mallory Forged: a new contact in plain is not listed, is kept as tampered, and nothing is sent back")
    func forgedPlainContact() async throws {
        try await withContactsDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            let alice = try a.contacts.add(Contact(name: "Alice Real"))
            try await a.sync()
            try await b.sync()

            let client = try await attacker(server)
            let mallory = Contact(name: "")
            var forged = RecordValue(recordType: Contact.recordType, recordID: mallory.recordID)
            forged["name"] = .string("Mallory Forged")
            forged["emails"] = .string(#"[{"id":"e1","label":"work","value":"mallory@example.org"}]"#)
            forged[Self.deviceField] = .string("device-0")
            let stored = try await overwrite(client, forged)

            for device in [a, b] {
                try await device.sync()
                #expect(device.names == ["Alice Real"])
                let refused = try #require(try device.store.tamperedRecords().first)
                #expect(refused.recordName == mallory.recordID.recordName)
                #expect(refused.reason == "plainField")
                #expect(refused.claimedDevice == "device-0", "the device the forgery claims")
                #expect(refused.message.contains("arrived in plain"), "\(refused.message)")
                #expect(refused.record.contains("Mallory Forged"), "kept as it arrived")
                #expect(try device.store.pendingCount() == 0)
            }
            #expect(try a.store.contact(alice.id) == alice)
            let now = try #require(try await client.lookupRecords([mallory.recordID]).records.first)
            #expect(now.recordChangeTag == stored.recordChangeTag)
        }
    }

    @Test("plain fields over an existing contact: the device keeps its own contact")
    func plainOverExisting() async throws {
        try await withContactsDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            let alice = try a.contacts.add(Contact(name: "Alice Real"))
            try await a.sync()
            try await b.sync()
            let client = try await attacker(server)
            let record = try await serverRecord(client, alice)
            let stored = try await overwrite(
                client, replacingFields(of: record, with: ["name": .string("Mallory Forged")]))
            try await b.sync()
            try await expectRefused(
                b, keeps: alice, recordName: alice.recordID.recordName, reason: "plainField", stored: stored,
                client: client)
            #expect(b.names == ["Alice Real"])
        }
    }

    @Test("a sealed value copied from another contact does not open")
    func copiedFromAnotherRecord() async throws {
        try await withContactsDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            let alice = try a.contacts.add(Contact(name: "Alice Real"))
            let bob = try a.contacts.add(Contact(name: "Bob Real"))
            try await a.sync()
            try await b.sync()
            let client = try await attacker(server)
            let aliceRecord = try await serverRecord(client, alice)
            let bobRecord = try await serverRecord(client, bob)
            // Bob's record with Alice's sealed contact: without the record name in the seal, B would list Alice
            // twice.
            let stored = try await overwrite(
                client, replacingFields(of: bobRecord, with: aliceRecord.fields))
            try await b.sync()
            try await expectRefused(
                b, keeps: bob, recordName: bob.recordID.recordName, reason: "doesNotOpen", stored: stored,
                client: client)
        }
    }

    @Test("a sealed value moved to another field of the same record does not open")
    func copiedFromAnotherField() async throws {
        try await withContactsDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            let alice = try a.contacts.add(Contact(name: "Alice Real"))
            try await a.sync()
            try await b.sync()
            let client = try await attacker(server)
            let record = try await serverRecord(client, alice)
            let device = try #require(record[Self.deviceField])
            let stored = try await overwrite(
                client, replacingFields(of: record, with: [Self.contactField: device, Self.deviceField: device]))
            try await b.sync()
            try await expectRefused(
                b, keeps: alice, recordName: alice.recordID.recordName, reason: "doesNotOpen", stored: stored,
                client: client)
        }
    }

    @Test("a sealed value copied from a contact of another book does not open")
    func copiedFromAnotherZone() async throws {
        try await withContactsDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            let work = try a.books.createBook(named: "Work")
            let colleague = try a.contacts.add(Contact(name: "Carol Colleague"), to: work.zoneID)
            let alice = try a.contacts.add(Contact(name: "Alice Real"))
            try await a.sync()
            try await b.sync()
            let client = try await attacker(server)
            let fromWork = try await serverRecord(client, colleague, in: work.zoneID)
            let record = try await serverRecord(client, alice)
            let stored = try await overwrite(client, replacingFields(of: record, with: fromWork.fields))
            try await b.sync()
            try await expectRefused(
                b, keeps: alice, recordName: alice.recordID.recordName, reason: "doesNotOpen", stored: stored,
                client: client)
            #expect(try b.store.contact(colleague.id) == colleague)
        }
    }

    @Test("a sealed value served as another record type (same record name, zone and field) does not open")
    func servedAsAnotherRecordType() async throws {
        try await withContactsDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            let alice = try a.contacts.add(Contact(name: "Alice Real"))
            try await a.sync()
            try await b.sync()
            let client = try await attacker(server)
            let record = try await serverRecord(client, alice)
            // A record's type cannot change on the server: the attacker deletes it and makes a conflict entry of
            // the same name, holding the contact's own sealed fields.
            _ = try await client.modifyRecords(ModifyRecordsRequest(saves: [], deletes: [record.recordID]))
            var retyped = RecordValue(recordType: "ContactConflict", recordID: record.recordID)
            for (key, value) in record.fields { retyped[key] = value }
            let stored = try await overwrite(client, retyped)
            try await b.sync()
            let refused = try b.store.tamperedRecords()
            #expect(refused.map(\.reason) == ["doesNotOpen"], "\(refused.map(\.message))")
            #expect(refused.first?.recordType == "ContactConflict")
            #expect(try b.store.contact(alice.id) == alice)
            #expect(try b.store.conflicts().isEmpty)
            #expect(try b.store.pendingCount() == 0)
            let now = try #require(try await client.lookupRecords([record.recordID]).records.first)
            #expect(now.recordChangeTag == stored.recordChangeTag)
        }
    }

    @Test("a record whose sealed fields were all dropped is refused, not read as an empty contact")
    func sealedFieldsDropped() async throws {
        try await withContactsDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            let alice = try a.contacts.add(Contact(name: "Alice Real"))
            try await a.sync()
            try await b.sync()
            let client = try await attacker(server)
            let stored = try await overwrite(
                client, replacingFields(of: try await serverRecord(client, alice), with: [:]))
            try await b.sync()
            try await expectRefused(
                b, keeps: alice, recordName: alice.recordID.recordName, reason: "plainField", stored: stored,
                client: client)
        }
    }

    @Test("rollback: an earlier ciphertext of a contact served again is refused; the device keeps the newer value")
    func rollback() async throws {
        try await withContactsDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            var alice = try a.contacts.add(Contact(name: "Alice Old"))
            try await a.sync()
            let client = try await attacker(server)
            let earlier = try await serverRecord(client, alice)
            alice.name = "Alice New"
            alice = try a.contacts.update(alice)
            try await a.sync()
            try await b.sync()
            #expect(try b.store.contact(alice.id) == alice)
            let newer = try await serverRecord(client, alice)
            #expect(newer.fields != earlier.fields)

            // The earlier sealed fields, saved again over the newer record: every seal opens, for its place.
            let stored = try await overwrite(client, replacingFields(of: newer, with: earlier.fields))
            for device in [a, b] {
                try await device.sync()
                try await expectRefused(
                    device, keeps: alice, recordName: alice.recordID.recordName, reason: "rollback", stored: stored,
                    client: client)
                #expect(device.names == ["Alice New"])
                let refused = try #require(try device.store.tamperedRecords().first)
                #expect(refused.message.contains("version 1 of the record, older than version 2"), "\(refused.message)")
            }
        }
    }

    @Test("the version sealed goes up with each save, and a device that never saw a record takes any version")
    func versionsGoUp() async throws {
        try await withContactsDevices(3) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            var alice = try a.contacts.add(Contact(name: "Alice 1"))
            try await a.sync()
            try await b.sync()
            for name in ["Alice 2", "Alice 3"] {
                alice.name = name
                alice = try b.contacts.update(alice)
                try await b.sync()
                try await a.sync()
            }
            #expect(try a.store.contact(alice.id)?.name == "Alice 3")
            #expect(try a.store.serverRecord(alice.id)?.sealedVersion == 3)
            #expect(try b.store.serverRecord(alice.id)?.sealedVersion == 3)
            // A device new to the record takes what the server has: it has seen nothing to go below.
            try await devices[2].sync()
            #expect(devices[2].names == ["Alice 3"])
            #expect(try devices[2].store.tamperedRecords().isEmpty)
            _ = server
        }
    }
}
