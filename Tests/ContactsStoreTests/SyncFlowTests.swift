import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncCore
import SyncTesting
import Testing

@Suite("Contacts: the sample's flows between devices")
struct SyncFlowTests {
    @Test("a contact created on A appears on B; a rename goes back and forth; a delete reaches B")
    func createRenameDelete() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.contacts.add(
                Contact(name: "Ada Lovelace", emails: [LabeledValue(label: "work", value: "ada@example.org")]))
            try await a.sync()
            try await b.sync()
            #expect(b.names == ["Ada Lovelace"])
            #expect(try b.contact(named: "Ada Lovelace").emails.map(\.value) == ["ada@example.org"])

            try b.edit("Ada Lovelace") { $0.name = "Ada King" }
            try await b.sync()
            try await a.sync()
            #expect(a.names == ["Ada King"])
            // The kept count follows adds, edits (a contact written again) and merges.
            #expect(try a.store.count() == 1 && b.store.count() == 1)
            try a.edit("Ada King") { $0.name = "Ada Lovelace" }
            try await a.sync()
            try await b.sync()
            #expect(b.names == ["Ada Lovelace"])

            try a.contacts.delete(try a.contact(named: "Ada Lovelace").id)
            try await a.sync()
            try await b.sync()
            #expect(b.names.isEmpty)
            #expect(try a.store.count() == 0 && b.store.count() == 0)
            #expect(try a.store.outbox().isEmpty && b.store.outbox().isEmpty)
        }
    }

    @Test("conflicting renames: the newer edit wins on both devices, whichever syncs first", arguments: [true, false])
    func conflict(newerSyncsFirst: Bool) async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.contacts.add(Contact(name: "Grace"))
            try await a.sync()
            try await b.sync()
            let now = Date()
            try a.edit("Grace", at: now) { $0.name = "Grace (older)" }
            try b.edit("Grace", at: now.addingTimeInterval(5)) { $0.name = "Grace (newer)" }
            let (first, second) = newerSyncsFirst ? (b, a) : (a, b)
            try await first.sync()
            try await second.sync()
            try await first.sync()
            #expect(a.names == ["Grace (newer)"])
            #expect(b.names == ["Grace (newer)"])
        }
    }

    @Test("A edits the phone, B the email: both edits survive on both devices")
    func perFieldMerge() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.contacts.add(
                Contact(
                    name: "Alan", emails: [LabeledValue(label: "home", value: "alan@example.org")],
                    phones: [LabeledValue(label: "mobile", value: "+1 555 0100")]))
            try await a.sync()
            try await b.sync()
            try a.edit("Alan") { $0.phones[0].value = "+1 555 0199" }
            try b.edit("Alan") {
                $0.emails[0].value = "alan@example.net"
                $0.emails.append(LabeledValue(label: "work", value: "turing@example.com"))
            }
            try await a.sync()
            try await b.sync()
            try await a.sync()
            for device in [a, b] {
                let alan = try device.contact(named: "Alan")
                #expect(alan.phones.map(\.value) == ["+1 555 0199"])
                #expect(alan.emails.map(\.value) == ["alan@example.net", "turing@example.com"])
            }
            #expect(try a.contact(named: "Alan") == b.contact(named: "Alan"))
        }
    }

    @Test("deleted on one device while edited on the other: the edit is kept on both, whatever the order")
    func deleteVersusModify() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.contacts.add(Contact(name: "Edsger"))
            try a.contacts.add(Contact(name: "Barbara"))
            try await a.sync()
            try await b.sync()
            // The edit reaches the server first.
            try a.contacts.delete(try a.contact(named: "Edsger").id)
            try b.edit("Edsger") { $0.notes = "kept: edited elsewhere" }
            try await b.sync()
            try await a.sync()
            // The delete reaches the server first.
            try a.contacts.delete(try a.contact(named: "Barbara").id)
            try b.edit("Barbara") { $0.organization = "Liskov & Co" }
            try await a.sync()
            try await b.sync()
            try await a.sync()
            #expect(a.names == ["Barbara", "Edsger"])
            #expect(b.names == ["Barbara", "Edsger"])
            #expect(try a.contact(named: "Barbara").organization == "Liskov & Co")
            #expect(try a.contact(named: "Edsger").notes == "kept: edited elsewhere")
        }
    }

    @Test("three devices converge on the same contacts after concurrent edits")
    func threeDevicesConverge() async throws {
        try await withContactsDevices(3) { _, _, devices in
            try devices[0].contacts.add(Contact(name: "Shared"))
            for device in devices { try await device.sync() }
            for (index, device) in devices.enumerated() {
                try device.contacts.add(Contact(name: "Only on \(index)"))
                try device.edit("Shared") { $0.notes = "note from \(index)" }
            }
            for _ in 0..<2 { for device in devices { try await device.sync() } }
            let contents = try devices.map { try $0.store.contacts() }
            #expect(contents[0].count == 4)
            #expect(contents[0] == contents[1] && contents[1] == contents[2])
        }
    }
}
