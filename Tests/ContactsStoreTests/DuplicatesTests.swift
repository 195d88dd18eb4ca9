import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncTesting
import Testing

@Suite("Contacts: likely duplicates, and merging them")
struct DuplicatesTests {
    @Test("same email, same phone digits, same name in any order, names a typo apart; never across books")
    func finding() async throws {
        try await withContactsDevices { _, _, devices in
            let a = devices[0]
            try a.contacts.add(
                Contact(name: "Ada Lovelace", emails: [LabeledValue(label: "", value: "ada@example.org")]))
            try a.contacts.add(
                Contact(name: "A. King", emails: [LabeledValue(label: "work", value: "ADA@example.org")]))
            try a.contacts.add(Contact(name: "Lovelace, Ada"))
            try a.contacts.add(
                Contact(name: "Grace Hopper", phones: [LabeledValue(label: "", value: "+1 (555) 010-0199")]))
            try a.contacts.add(Contact(name: "G. Hopper", phones: [LabeledValue(label: "", value: "555 010 0199")]))
            try a.contacts.add(Contact(name: "Alan Mathison Turing"))
            try a.contacts.add(Contact(name: "Alan Mathisson Turing"))
            try a.contacts.add(Contact(name: "Bob"))
            try a.contacts.add(Contact(name: "Rob"))
            let work = try a.books.createBook(named: "Work").zoneID
            try a.contacts.add(
                Contact(name: "Ada Lovelace", emails: [LabeledValue(label: "", value: "ada@example.org")]), to: work)

            let groups = try a.store.duplicates()
            #expect(
                groups.map { $0.contacts.map(\.name) } == [
                    ["A. King", "Ada Lovelace", "Lovelace, Ada"], ["Alan Mathison Turing", "Alan Mathisson Turing"],
                    ["G. Hopper", "Grace Hopper"],
                ])
            #expect(groups[0].reasons == ["same email ada@example.org", "same name"])
            #expect(groups[1].reasons == ["similar names"])
            #expect(groups[2].reasons == ["same phone +1 (555) 010-0199"])
        }
    }

    @Test("merging keeps every distinct value, and syncs as an edit and deletions")
    func merging() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            let ada = try a.contacts.add(
                Contact(
                    name: "Ada Lovelace", emails: [LabeledValue(label: "work", value: "ada@example.org")],
                    phones: [LabeledValue(label: "", value: "+44 20 7946 0000")], organization: "Analytical Engines",
                    notes: "Met at the lecture.", groups: ["Maths"]))
            let other = try a.contacts.add(
                Contact(
                    name: "Lovelace, Ada",
                    emails: [
                        LabeledValue(label: "", value: "ADA@example.org"),
                        LabeledValue(label: "home", value: "ada@home.example"),
                    ],
                    phones: [LabeledValue(label: "", value: "020 7946 0000")], organization: "Babbage & Co",
                    address: PostalAddress(city: "London"), notes: "Likes poetry.", birthday: ContactDate("1815-12-10"),
                    groups: ["Family", "maths"], extras: ["X-A:1"]))
            try await a.sync()
            try await b.sync()
            let merged = try a.contacts.merge([ada.id, other.id])
            #expect(merged.id == ada.id && merged.name == "Ada Lovelace")
            #expect(merged.emails.map(\.value) == ["ada@example.org", "ada@home.example"])
            #expect(merged.phones.map(\.value) == ["+44 20 7946 0000"])
            #expect(merged.organization == "Analytical Engines" && merged.address.city == "London")
            #expect(merged.birthday == ContactDate("1815-12-10") && merged.groups == ["Maths", "Family"])
            #expect(merged.notes == "Met at the lecture.\n\nLikes poetry.\nAlso organisation: Babbage & Co")
            #expect(merged.extras == ["X-A:1"])
            #expect(a.names == ["Ada Lovelace"])
            try await a.sync()
            try await b.sync()
            #expect(b.names == ["Ada Lovelace"])
            #expect(try b.contact(named: "Ada Lovelace").sameContent(as: merged))

            // Mistakes change nothing.
            #expect(throws: (any Error).self) { try a.contacts.merge([ada.id]) }
            #expect(throws: (any Error).self) { try a.contacts.merge([ada.id, other.id]) }
            #expect(a.names == ["Ada Lovelace"])
        }
    }
}
