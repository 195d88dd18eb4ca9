import ContactsModel
import ContactsTesting
import Foundation
import Testing

@testable import ContactsStore

/// A contact made on a device gets its items' IDs from its own ID (``Contact/itemID(of:list:index:)``).
@Suite("Item IDs made from the contact's own")
struct ItemIDTests {
    static let card = """
        BEGIN:VCARD
        VERSION:4.0
        UID:urn:uuid:4f1c8e2a-1111-4c2d-9e1f-0a2b3c4d5e6f
        FN:Ada Lovelace
        EMAIL;TYPE=home:ada@example.org
        EMAIL;TYPE=work:ada@engines.example
        TEL;TYPE=cell:+44 20 7946 0000
        END:VCARD

        """

    @Test("the same card imported on two devices before either syncs is one contact with its items once")
    func sameCardTwice() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            for device in [a, b] { _ = try device.interchange.importVCards(Self.card) }
            try await a.sync()
            try await b.sync()
            try await a.sync()
            for device in [a, b] {
                #expect(device.names == ["Ada Lovelace"])
                let ada = try device.contact(named: "Ada Lovelace")
                #expect(ada.emails.map(\.value) == ["ada@example.org", "ada@engines.example"])
                #expect(ada.phones.map(\.value) == ["+44 20 7946 0000"])
            }
            #expect(
                try a.contact(named: "Ada Lovelace").emails.map(\.id)
                    == b.contact(named: "Ada Lovelace").emails.map(\.id))
        }
    }

    @Test("items keep their IDs through edits and syncs; an item added later gets a random one, on both devices")
    func editsKeepIDs() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            let added = try a.contacts.add(
                Contact(
                    name: "Grace Hopper",
                    emails: [
                        LabeledValue(label: "work", value: "grace@navy.example"),
                        LabeledValue(label: "home", value: "grace@example.org"),
                    ]))
            let made = added.emails.map(\.id)
            #expect(made == (0..<2).map { Contact.itemID(of: added.id, list: .emails, index: UInt8($0)).uuidString })
            try await a.sync()
            try await b.sync()
            // B removes the first email and adds one; A edits the second meanwhile: the merge goes item by item.
            try b.edit("Grace Hopper") {
                $0.emails.removeFirst()
                $0.emails.append(LabeledValue(label: "other", value: "amazing.grace@example.net"))
            }
            try a.edit("Grace Hopper") { $0.emails[1].value = "grace.hopper@example.org" }
            try await b.sync()
            try await a.sync()
            try await b.sync()
            for device in [a, b] {
                let grace = try device.contact(named: "Grace Hopper")
                #expect(
                    Set(grace.emails.map(\.value)) == ["grace.hopper@example.org", "amazing.grace@example.net"],
                    "\(grace.emails.map(\.value))")
                #expect(grace.emails.first { $0.value == "grace.hopper@example.org" }?.id == made[1])
                let later = try #require(grace.emails.first { $0.value == "amazing.grace@example.net" })
                #expect(try #require(UUID(uuidString: later.id)).uuid.6 >> 4 == 4, "a random ID")
            }
        }
    }
}
