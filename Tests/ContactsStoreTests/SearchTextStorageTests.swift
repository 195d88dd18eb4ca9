import ContactsModel
import ContactsTesting
import Foundation
import GRDB
import Testing

@testable import ContactsStore

/// The device file keeps each contact's search text without the name's segment, which is the sort key it
/// keeps beside it anyway; versions up to 0.3 kept the text whole, which reads as it is.
@Suite("Search texts as the device file keeps them")
struct SearchTextStorageTests {
    @Test("the name is kept once; searches, the list and renames work as before, on both devices")
    func nameKeptOnce() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            let lukasz = try a.contacts.add(
                Contact(
                    name: "Łukasz Nowak", emails: [LabeledValue(label: "home", value: "Lukasz@Example.pl")],
                    organization: "Filharmonia")
            ).id
            let bare = try a.contacts.add(Contact(name: "Only A. Name")).id
            try await a.sync()
            try await b.sync()
            for device in [a, b] {
                #expect(try storedText(lukasz, in: device) == "\u{1F}elukasz@example.pl\u{1F}ofilharmonia")
                #expect(try storedText(bare, in: device) == "")
                for summary in try device.store.summaries() {
                    #expect(summary.searchText == (try device.store.contact(summary.id))?.searchText)
                }
                #expect(try names(device, "lukasz") == ["Łukasz Nowak"])
                #expect(try names(device, "name:nowak", "org:filharmonia") == ["Łukasz Nowak"])
                #expect(try names(device, "name:only") == ["Only A. Name"])
                #expect(try names(device, "name:example").isEmpty)
            }

            // Renamed: the name's segment is the new sort key, on the device that renamed and the other.
            try a.edit("Łukasz Nowak") { $0.name = "Lucas Novak" }
            try await a.sync()
            try await b.sync()
            for device in [a, b] {
                #expect(try names(device, "name:novak") == ["Lucas Novak"])
                #expect(try names(device, "nowak").isEmpty)
            }
        }
    }

    @Test("a search text kept whole, as versions up to 0.3 did, reads as it is until the contact is saved")
    func wholeTextReads() async throws {
        try await withContactsDevices(1) { _, _, devices in
            let device = devices[0]
            let contact = Contact(
                name: "Grace Hopper", emails: [LabeledValue(label: "work", value: "grace@navy.example")])
            let id = try device.contacts.add(contact).id
            let whole = try #require(try device.store.contact(id)).searchText
            #expect(whole.utf8.first == UInt8(ascii: "n"))
            try setStoredText(whole, id, in: device)

            #expect(try device.store.summaries().map(\.searchText) == [whole])
            #expect(try names(device, "name:hopper", "email:navy") == ["Grace Hopper"])
            #expect(try names(device, "name:navy").isEmpty)

            try device.edit("Grace Hopper") { $0.organization = "Navy" }
            #expect(try storedText(id, in: device) == "\u{1F}egrace@navy.example\u{1F}onavy")
            #expect(try names(device, "name:grace", "org:navy") == ["Grace Hopper"])
        }
    }

    private func names(_ device: ContactsDevice, _ words: String...) throws -> [String] {
        let search = try #require(ContactSearch(words.joined(separator: " ")))
        return try device.store.contacts(matching: search).map(\.name)
    }

    private func storedText(_ id: UUID, in device: ContactsDevice) throws -> String? {
        let queue = try DatabaseQueue(path: device.store.path)
        defer { try? queue.close() }
        return try queue.read { db in
            try String.fetchOne(db, sql: "SELECT searchText FROM contact WHERE id = ?", arguments: [id])
        }
    }

    private func setStoredText(_ text: String, _ id: UUID, in device: ContactsDevice) throws {
        let queue = try DatabaseQueue(path: device.store.path)
        defer { try? queue.close() }
        try queue.write { db in
            try db.execute(sql: "UPDATE contact SET searchText = ? WHERE id = ?", arguments: [text, id])
        }
    }
}
