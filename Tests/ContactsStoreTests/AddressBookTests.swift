import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncCore
import SyncTesting
import Testing

/// Address books as zones, and sharing them between accounts, through the contacts app's device:
/// Ada (two devices) shares "Family" read-write and "Work" read-only with Grace (one device).
@Suite("Contacts: address books and sharing")
struct AddressBookTests {
    private func book(_ device: ContactsDevice, _ name: String) throws -> AddressBook {
        try device.store.resolveBook(name)
    }

    private func names(_ device: ContactsDevice, in book: String) throws -> [String] {
        try device.store.contacts(in: try self.book(device, book).zoneID).map(\.name)
    }

    @Test("books: created, filled, renamed and deleted on one device, the same on the other")
    func ownBooks() async throws {
        try await withContactsDevices { _, _, devices in
            let (laptop, phone) = (devices[0], devices[1])
            try laptop.contacts.add(Contact(name: "Default One"))
            let family = try laptop.books.createBook(named: "Family")
            try laptop.contacts.add(Contact(name: "Mum"), to: family.zoneID)
            #expect(throws: DeviceError.self) { try laptop.books.createBook(named: "family") }
            #expect(throws: DeviceError.self) { try laptop.books.createBook(named: "  ") }
            try await laptop.sync()
            try await phone.sync()
            #expect(try phone.store.books().map(\.name) == ["Contacts", "Family"])
            #expect(try names(phone, in: "Family") == ["Mum"])
            #expect(try names(phone, in: "Contacts") == ["Default One"])

            try phone.books.renameBook(try book(phone, "Family"), to: "Family & friends")
            try await phone.sync()
            try await laptop.sync()
            #expect(try laptop.store.books().map(\.name) == ["Contacts", "Family & friends"])

            #expect(throws: DeviceError.self) { try laptop.books.deleteBook(try book(laptop, "Contacts")) }
            try laptop.books.deleteBook(try book(laptop, "Family & friends"))
            #expect(laptop.names == ["Default One"])
            try await laptop.sync()
            try await phone.sync()
            #expect(try phone.store.books().map(\.name) == ["Contacts"])
            #expect(phone.names == ["Default One"])
        }
    }

    @Test(
        "Ada shares Family read-write and Work read-only with Grace: edits flow both ways in Family, Work refuses Grace's, removal takes Family away, Grace's own book stays hers"
    )
    func sharing() async throws {
        try await withBookPeople { people in
            let (ada, adaPhone, grace) = (people.ada, people.adaPhone, people.grace)
            let family = try ada.books.createBook(named: "Family")
            let work = try ada.books.createBook(named: "Work")
            try ada.contacts.add(Contact(name: "Mum"), to: family.zoneID)
            try ada.contacts.add(Contact(name: "Boss"), to: work.zoneID)
            try ada.contacts.add(Contact(name: "Ada's Private Friend"))
            try grace.contacts.add(Contact(name: "Grace's Private Friend"))
            try await grace.sync()

            await #expect(throws: DeviceError.self) {
                _ = try await ada.books.shareBook(try book(ada, "Contacts"), with: "grace", readOnly: false)
            }
            await #expect(throws: DeviceError.self) {
                _ = try await ada.books.shareBook(family, with: "nobody-by-this-name", readOnly: false)
            }
            let familyInvitation = try await ada.books.shareBook(family, with: "grace", readOnly: false)
            let workInvitation = try await ada.books.shareBook(work, with: "grace", readOnly: true)

            let accepted = try await grace.books.acceptInvitation(familyInvitation.description)
            #expect(accepted.name == "Family")
            #expect(accepted.access == .readWrite)
            #expect(accepted.ownerUsername == "ada")
            try await grace.books.acceptInvitation(workInvitation.description)
            #expect(try names(grace, in: "Family") == ["Mum"])
            #expect(try names(grace, in: "Work") == ["Boss"])
            #expect(grace.names.contains("Ada's Private Friend") == false)

            // Family: both ways.
            try grace.contacts.add(Contact(name: "Cousin"), to: try book(grace, "Family").zoneID)
            try grace.edit("Mum") { $0.notes = "birthday in May" }
            try await grace.sync()
            try await adaPhone.sync()
            #expect(try names(adaPhone, in: "Family") == ["Cousin", "Mum"])
            #expect(try adaPhone.contact(named: "Mum").notes == "birthday in May")
            #expect(try book(adaPhone, "Family").participants.map(\.username) == ["ada", "grace"])
            try adaPhone.edit("Cousin") { $0.organization = "Analytical Engines" }
            try await adaPhone.sync()
            try await grace.sync()
            #expect(try grace.contact(named: "Cousin").organization == "Analytical Engines")

            // Work: read-only, refused before anything is queued.
            let pending = try grace.store.pendingCount()
            #expect(throws: ContactError.self) { try grace.edit("Boss") { $0.notes = "nope" } }
            #expect(throws: ContactError.self) { try grace.contacts.delete(try grace.contact(named: "Boss").id) }
            #expect(throws: ContactError.self) {
                try grace.contacts.add(Contact(name: "Intruder"), to: try book(grace, "Work").zoneID)
            }
            #expect(try grace.store.pendingCount() == pending)
            #expect(try grace.contact(named: "Boss").notes == "")

            // Grace's own book is never Ada's.
            try await ada.sync()
            #expect(!ada.names.contains("Grace's Private Friend"))
            #expect(try ada.store.books().map(\.name) == ["Contacts", "Family", "Work"])

            // Ada removes Grace from Family: it leaves Grace's device, Work stays.
            try await ada.books.unshareBook(family, from: "grace")
            try await grace.sync()
            #expect(try grace.store.books().map(\.name) == ["Contacts", "Work"])
            #expect(grace.names == ["Boss", "Grace's Private Friend"])

            // Grace leaves Work: her account has no book of Ada's; Ada's data is untouched.
            try grace.books.leaveBook(try book(grace, "Work"))
            try await grace.sync()
            #expect(try grace.store.books().map(\.name) == ["Contacts"])
            try await ada.sync()
            #expect(try names(ada, in: "Work") == ["Boss"])
            #expect(try names(ada, in: "Family") == ["Cousin", "Mum"])
        }
    }

    @Test(
        "book keys: only the owner rotates; Grace reads what Ada writes after a rotation; Grace leaving makes Ada's next sync rotate, once"
    )
    func bookKeys() async throws {
        try await withBookPeople { people in
            let (ada, adaPhone, grace) = (people.ada, people.adaPhone, people.grace)
            let family = try ada.books.createBook(named: "Family")
            try ada.contacts.add(Contact(name: "Mum"), to: family.zoneID)
            let invitation = try await ada.books.shareBook(family, with: "grace", readOnly: false)
            #expect(!invitation.description.contains("#"), "a private share's invitation carries no key")
            try await grace.books.acceptInvitation(invitation.description)
            #expect(try names(grace, in: "Family") == ["Mum"])
            let client = try await TestClient(baseURL: people.server.baseURL).signedIn(
                username: "ada", password: "correct horse battery")
            func version() async throws -> Int? {
                try await client.listZones().first { $0.zoneID == family.zoneID }?.encryptionKey?.keyVersion
            }

            await #expect(throws: DeviceError.self) { try await grace.books.rotateBookKey(try book(grace, "Family")) }
            let before = try #require(try await version())
            #expect(try await ada.books.rotateBookKey(family) == before + 1)
            #expect(try await version() == before + 1)
            try await adaPhone.sync()
            try adaPhone.contacts.add(Contact(name: "Cousin"), to: family.zoneID)
            try await adaPhone.sync()
            try await grace.sync()
            #expect(try names(grace, in: "Family") == ["Cousin", "Mum"])

            // Grace leaves: Ada's next sync notices and makes a new version; the one after changes nothing.
            try grace.books.leaveBook(try book(grace, "Family"))
            try await grace.sync()
            try await ada.sync()
            #expect(try await version() == before + 2)
            try await ada.sync()
            try await adaPhone.sync()
            #expect(try await version() == before + 2)
            #expect(try names(adaPhone, in: "Family") == ["Cousin", "Mum"])
        }
    }

    @Test("an invitation for another server, a garbled one, or one withdrawn is refused with what to do")
    func badInvitations() async throws {
        try await withBookPeople { people in
            let family = try people.ada.books.createBook(named: "Family")
            let invitation = try await people.ada.books.shareBook(family, with: "grace", readOnly: false)
            await #expect(throws: DeviceError.self) {
                try await people.grace.books.acceptInvitation("not an invitation")
            }
            let host = try #require(URL(string: people.server.baseURL)?.host)
            let elsewhere = invitation.description.replacingOccurrences(of: host, with: "example.org")
            #expect(elsewhere != invitation.description)
            await #expect(throws: DeviceError.self) { try await people.grace.books.acceptInvitation(elsewhere) }
            try await people.ada.books.unshareBook(family, from: "grace")
            await #expect(throws: DeviceError.self) {
                try await people.grace.books.acceptInvitation(invitation.description)
            }
            #expect(try people.grace.store.books().map(\.name) == ["Contacts"])
        }
    }

    @Test(
        "a contact of the same ID in Grace's own book and in Ada's shared one: Grace's stays hers, untouched; the event log says why"
    )
    func sameIDInTwoBooks() async throws {
        try await withBookPeople { people in
            let card =
                "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:urn:uuid:5E1F3C2A-0000-4000-8000-0000000000AA\r\nFN:Shared Friend\r\nEND:VCARD\r\n"
            _ = try people.grace.interchange.importVCards(card)
            try people.grace.edit("Shared Friend") { $0.notes = "Grace's note" }
            try await people.grace.sync()
            let family = try people.ada.books.createBook(named: "Family")
            _ = try people.ada.interchange.importVCards(card, into: family.zoneID)
            let invitation = try await people.ada.books.shareBook(family, with: "grace", readOnly: false)
            let activity = people.grace.activity()
            try await people.grace.books.acceptInvitation(invitation.description)
            #expect(try names(people.grace, in: "Contacts") == ["Shared Friend"])
            #expect(try names(people.grace, in: "Family") == [])
            #expect(try people.grace.contact(named: "Shared Friend").notes == "Grace's note")
            // Signing out ends what the log is read for: the account change comes after anything the sync told.
            try await people.grace.account.signOut()
            var told = false
            for await event in activity {
                if case .failure(let text, _) = event, text.contains("is in two books") {
                    told = true
                    break
                }
                if case .accountChanged = event { break }
            }
            #expect(told)
            try await people.ada.sync()
            #expect(try people.ada.contact(named: "Shared Friend").notes == "")
        }
    }
}
