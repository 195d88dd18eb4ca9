import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncServer
import SyncTesting
import Testing

@Suite("Contacts: the conflict log keeps what a merge dropped, on every device")
struct ConflictLogTests {
    @Test("the merge reports what it drops, and only what both sides changed")
    func mergeReportsLosses() {
        let base = Contact(
            name: "Ada", emails: [LabeledValue(id: "e1", label: "home", value: "ada@example.org")],
            notes: "base", modified: Date(timeIntervalSince1970: 100))
        var local = base
        local.name = "Ada King"
        local.notes = "local notes"
        local.emails[0].value = "ada@local.example"
        local = local.stamped(against: base, at: Date(timeIntervalSince1970: 200))
        var remote = base
        remote.name = "Ada Lovelace"
        remote.emails[0].value = "ada@remote.example"
        remote = remote.stamped(against: base, at: Date(timeIntervalSince1970: 300))

        let (merged, losses) = ContactMerge.resolve(base: base, local: local, remote: remote)
        #expect(merged.name == "Ada Lovelace" && merged.notes == "local notes")
        #expect(merged.emails.map(\.value) == ["ada@remote.example"])
        // The notes changed on one side only: taken, not a conflict.
        #expect(losses.map(\.field) == [.name, .emails])
        #expect(losses.map(\.lost.value.text) == ["Ada King", "home: ada@local.example"])
        #expect(losses.map(\.kept.value.text) == ["Ada Lovelace", "home: ada@remote.example"])
        #expect(losses.allSatisfy { $0.lostLocally })
        #expect(losses[0].lost.edited == Date(timeIntervalSince1970: 200))

        // The same merge from the other side loses the same values, as the remote ones.
        let (again, mirrored) = ContactMerge.resolve(base: base, local: remote, remote: local)
        #expect(again.sameContent(as: merged))
        #expect(mirrored.map(\.lost.value.text) == ["Ada King", "home: ada@local.example"])
        #expect(mirrored.allSatisfy { !$0.lostLocally })
    }

    @Test("concurrent edits on three devices: the expected entries on every device; restoring one converges")
    func threeDevices() async throws {
        let clock = TestClock()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: start)
        let now: @Sendable () -> Date = { start.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
        try await withContactsDevices(3, configuration: configuration, clocks: [now, now, now]) { _, _, devices in
            let (a, b, c) = (devices[0], devices[1], devices[2])
            try a.contacts.add(Contact(name: "Ada", emails: [LabeledValue(label: "home", value: "ada@example.org")]))
            for device in devices { try await device.sync() }
            #expect(c.names == ["Ada"])

            // Each device edits Ada without having seen the others' edits: A and B her name, B and C
            // her email, C her notes.
            await clock.advance(by: .seconds(60))
            try a.edit("Ada") { $0.name = "Ada King" }
            await clock.advance(by: .seconds(60))
            try b.edit("Ada") {
                $0.name = "Ada Lovelace"
                $0.emails[0].value = "ada@b.example"
            }
            await clock.advance(by: .seconds(60))
            try c.edit("Ada") {
                $0.notes = "Analytical Engine"
                $0.emails[0].value = "ada@c.example"
            }
            for device in devices + devices { try await device.sync() }

            // Each value a later edit overwrote is logged once, with both sides, and every device has the log.
            for device in devices {
                let ada = try device.contact(named: "Ada Lovelace")
                #expect(ada.emails.map(\.value) == ["ada@c.example"] && ada.notes == "Analytical Engine")
                // (Both merges happened at one time here, so the log's order, newest first, is not tested.)
                let log = try device.store.conflicts()
                #expect(Set(log.map(\.field)) == [.emails, .name] && log.count == 2, "\(device.name): \(log)")
                guard let name = log.first(where: { $0.field == .name }),
                    let email = log.first(where: { $0.field == .emails })
                else { continue }
                #expect(name.lost.value.text == "Ada King" && name.lost.device == "device-0")
                #expect(name.kept.value.text == "Ada Lovelace" && name.kept.device == "device-1")
                #expect(name.lost.edited == start.addingTimeInterval(60))
                #expect(name.kept.edited == start.addingTimeInterval(120))
                #expect(email.lost.value.text == "home: ada@b.example" && email.lost.device == "device-1")
                #expect(email.kept.value.text == "home: ada@c.example" && email.kept.device == "device-2")
                #expect(name.contactName == "Ada Lovelace")
            }

            // C puts A's name back: a new edit that wins everywhere, and the entry leaves every log.
            await clock.advance(by: .seconds(60))
            let nameEntry = try #require(try c.store.conflicts().first { $0.field == .name })
            try c.contacts.restoreConflict(nameEntry.id)
            for device in [c, a, b] { try await device.sync() }
            for device in devices {
                #expect(device.names == ["Ada King"])
                #expect(try device.store.conflicts().map(\.field) == [.emails], "\(device.name)")
            }
            // A dismisses the other: the email stays as it is, and no device has an entry left.
            let emailEntry = try #require(try a.store.conflicts().first)
            try a.contacts.dismissConflict(emailEntry.id)
            for device in devices { try await device.sync() }
            for device in devices {
                #expect(try device.store.conflictCount() == 0, "\(device.name)")
                #expect(try device.contact(named: "Ada King").emails.map(\.value) == ["ada@c.example"])
            }
        }
    }

    @Test("restoring into a contact deleted since says so and changes nothing; an entry gone says so")
    func restoreRefusals() async throws {
        try await withContactsDevices(2) { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.contacts.add(Contact(name: "Grace"))
            for device in devices { try await device.sync() }
            try a.edit("Grace", at: Date().addingTimeInterval(-10)) { $0.organization = "Navy" }
            try b.edit("Grace") { $0.organization = "Harvard" }
            try await a.sync()
            try await b.sync()
            let entry = try #require(try b.store.conflicts().first)
            #expect(entry.lost.value.text == "Navy" && entry.kept.value.text == "Harvard")

            try b.contacts.delete(try b.contact(named: "Grace").id)
            let error = #expect(throws: DeviceError.self) { try b.contacts.restoreConflict(entry.id) }
            #expect(error?.description.contains("Grace was deleted since") == true, "\(String(describing: error))")
            // The library names the entry to dismiss; the CLI's words name the command (`CLIWords`).
            #expect(
                error == .conflictContactDeleted(contact: "Grace", field: entry.fieldName, entry: entry.shortID)
                    && error?.description.contains("dismiss entry \(entry.shortID)") == true)
            #expect(try b.store.conflictCount() == 1)

            try b.contacts.dismissConflict(entry.id)
            let gone = #expect(throws: DeviceError.self) { try b.contacts.restoreConflict(entry.id) }
            #expect(gone?.description.contains("no longer in the log") == true)
        }
    }
}
