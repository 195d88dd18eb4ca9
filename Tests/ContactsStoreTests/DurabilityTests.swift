import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import GRDB
import SyncCore
import SyncKit
import SyncTesting
import Testing

@Suite("Contacts: crashes, restarts and accounts")
struct DurabilityTests {
    @Test("an edit saved but never sent survives a restart and is sent once")
    func editSurvivesRestart() async throws {
        try await withContactsDevices { server, directory, devices in
            var a: ContactsDevice? = try openDevice("crashy", directory: directory, server: server)
            try await a!.account.signIn(username: "ada", password: "correct horse battery", passphrase: testPassphrase)
            try a!.contacts.add(Contact(name: "Unsent"))
            // The process dies before any sync or state save: only the SQLite file remains.
            a = nil
            do {
                let reopened = try openDevice("crashy", directory: directory, server: server)
                #expect(reopened.names == ["Unsent"])
                #expect(try reopened.store.outbox().count == 1)
                try await reopened.sync()
                #expect(try reopened.store.outbox().isEmpty)
            }
            try await devices[1].sync()
            #expect(devices[1].names == ["Unsent"])
            // Nothing is left to send after another restart.
            let again = try openDevice("crashy", directory: directory, server: server)
            #expect(!again.engine.state.hasPendingUntrackedChanges)
            #expect(try again.store.outbox().isEmpty)
        }
    }

    @Test("a save the server applied but whose answer was lost is not written twice after a restart")
    func lostAnswerIsNotResent() async throws {
        try await withContactsDevices { server, directory, devices in
            try devices[0].contacts.add(Contact(name: "Once"))
            server.faults.plan = FaultPlan(dropResponse: 1, pathPrefix: "/v1/databases/private/records/modify")
            await #expect(throws: (any Error).self) { try await devices[0].sync() }
            server.faults.plan = .none
            #expect(try devices[0].store.outbox().count == 1, "the edit stays in the outbox")
            try await devices[0].sync()
            #expect(try devices[0].store.outbox().isEmpty)
            try await devices[1].sync()
            #expect(devices[1].names == ["Once"])
            let record = try #require(try devices[1].store.serverRecord(devices[1].contact(named: "Once").id))
            let local = try #require(try devices[0].store.serverRecord(devices[0].contact(named: "Once").id))
            #expect(record.recordChangeTag == local.recordChangeTag, "one version on the server, known to both")
        }
    }

    @Test("signing in to another account wipes the device; signing out keeps it until another account signs in")
    func accountSwitchWipes() async throws {
        try await withContactsDevices(1) { server, directory, devices in
            let a = devices[0]
            try a.contacts.add(Contact(name: "Ada's friend"))
            try await a.sync()
            let other = try openDevice("grace-device", directory: directory, server: server)
            try await other.account.signUp(
                username: "grace", password: "another good password", passphrase: testPassphrase)
            try other.contacts.add(Contact(name: "Grace's friend"))
            try await other.sync()

            try await a.account.signIn(username: "grace", password: "another good password", passphrase: testPassphrase)
            try await a.sync()
            #expect(a.names == ["Grace's friend"], "Ada's data left the device; Grace's arrived")
            // Signing out keeps Grace's contacts here; signing in as Ada again removes them before Ada's come back.
            try await a.account.signOut()
            #expect(a.names == ["Grace's friend"])
            #expect(!a.isSignedIn)
            try await a.account.signIn(username: "ada", password: "correct horse battery", passphrase: testPassphrase)
            #expect(a.names.isEmpty)
            try await a.sync()
            #expect(a.names == ["Ada's friend"])
        }
    }

    @Test("a zone deleted on the server wipes other devices; saving again recreates it")
    func serverDataDeleted() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.contacts.add(Contact(name: "Doomed"))
            try await a.sync()
            try await b.sync()
            try await a.account.deleteServerData()
            #expect(a.names.isEmpty)
            try await b.sync()
            #expect(b.names.isEmpty)
            try b.contacts.add(Contact(name: "Fresh start"))
            try await b.sync()
            try await a.sync()
            #expect(a.names == ["Fresh start"])
        }
    }

    @Test("contacts earlier versions stored (both JSON forms) read back unchanged; a damaged row says what to do")
    func earlierContactFormats() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/store.sqlite"
            var contact = Contact(
                name: "Zoë Øberg", emails: [LabeledValue(label: "home", value: "zoe@example.com")],
                address: PostalAddress(city: "København"), notes: "line one\nline two", extras: ["X-A:1", ""])
            contact.modified[.notes] = Date(timeIntervalSince1970: 1_600_000_000.5)
            do {
                let store = try ContactStore(path: path)
                try store.saveLocal([contact])
                #expect(try store.contact(contact.id) == contact, "the current format round-trips")
            }
            let firstFormat = JSONEncoder()
            firstFormat.dateEncodingStrategy = .millisecondsSince1970
            let secondFormat = Data([2]) + (try JSONEncoder().encode(contact))
            let current = try await rawContactRow(path, contact.id)
            for (row, form) in [
                (try firstFormat.encode(contact), "JSON with dates in milliseconds"),
                (secondFormat, "format byte 2, then JSON"),
            ] {
                try await setRawContactRow(path, contact.id, row)
                let reopened = try ContactStore(path: path)
                #expect(try reopened.contact(contact.id) == contact, "\(form)")
                #expect(try reopened.contacts() == [contact], "\(form)")
            }
            try await setRawContactRow(path, contact.id, current.dropLast(3))
            #expect {
                try ContactStore(path: path).contact(contact.id)
            } throws: { error in
                // What to do, in the library's words (the CLI names its commands: `contacts wipe --local-data`).
                guard case .damagedRow = error as? ContactError else { return false }
                return "\(error)".contains("deleting this device's local data and syncing again")
            }
        }
    }

    private func rawContactRow(_ path: String, _ id: UUID) async throws -> Data {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try await queue.read { db in
            try Data.fetchOne(db, sql: "SELECT json FROM contact WHERE id = ?", arguments: [id]) ?? Data()
        }
    }

    private func setRawContactRow(_ path: String, _ id: UUID, _ row: Data) async throws {
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "UPDATE contact SET json = ? WHERE id = ?", arguments: [row, id])
        }
        try queue.close()
    }

    @Test("deleting local data keeps the server's copy; the next sync brings it back")
    func deleteLocalData() async throws {
        try await withContactsDevices(1) { _, _, devices in
            let a = devices[0]
            try a.contacts.add(Contact(name: "Backed up"))
            try await a.sync()
            try await a.account.deleteLocalData()
            #expect(a.names.isEmpty)
            try await a.sync()
            #expect(a.names == ["Backed up"])
        }
    }

    @Test("bad input is refused with a clear message and changes nothing")
    func badInput() async throws {
        try await withContactsDevices(1) { _, _, devices in
            let a = devices[0]
            let cases: [(Contact, String)] = [
                (Contact(name: "  "), "name is empty"),
                (Contact(name: String(repeating: "x", count: 600)), "too long"),
                (Contact(name: "Evil\u{1B}[2J"), "control characters"),
                (Contact(name: "Bob", emails: [LabeledValue(label: "", value: "bob at example")]), "not an email"),
                (Contact(name: "Bob", phones: [LabeledValue(label: "", value: "call me")]), "not a phone number"),
            ]
            for (contact, message) in cases {
                let error = #expect(throws: ContactError.self) { try a.contacts.add(contact) }
                #expect(error?.description.contains(message) == true, "\(error?.description ?? "")")
            }
            #expect(a.names.isEmpty)
            let outbox = try a.store.outbox()
            #expect(outbox.isEmpty)
            #expect(throws: ContactError.self) { try a.store.resolve("nope") }
        }
    }
}
