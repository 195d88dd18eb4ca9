import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncServer
import SyncTesting
import Testing

@Suite("Contacts: edit times follow the server's clock, and never go back")
struct EditClockTests {
    @Test("clocks hours ahead and behind: the edit made last wins, not the device whose clock runs ahead")
    func skewedClocks() async throws {
        let clock = TestClock()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: start)
        // A's clock is right, B's three hours behind, C's three hours ahead.
        let clocks = [0.0, -3, 3].map { hours in
            { @Sendable in start.addingTimeInterval(clock.now.offset.seconds + hours * 3600) }
        }
        try await withContactsDevices(3, configuration: configuration, clocks: clocks) { _, _, devices in
            let (a, b, c) = (devices[0], devices[1], devices[2])
            // Each device saves once, and so learns how far its clock is from the server's.
            for (device, name) in zip(devices, ["Ada", "Bob", "Cy"]) {
                try device.contacts.add(Contact(name: name))
                try await device.sync()
            }
            for device in devices { try await device.sync() }
            #expect(a.names == ["Ada", "Bob", "Cy"] && b.names == a.names && c.names == a.names)

            // C edits Ada's notes; a minute later B does, neither having seen the other's edit.
            await clock.advance(by: .seconds(60))
            try c.edit("Ada") { $0.notes = "from C, first" }
            await clock.advance(by: .seconds(60))
            try b.edit("Ada") { $0.notes = "from B, a minute later" }
            try await c.sync()
            try await b.sync()
            for device in [c, a] { try await device.sync() }
            for device in devices {
                #expect(try device.contact(named: "Ada").notes == "from B, a minute later")
            }
            // B's edit is dated by the server's clock, not by B's three hours behind.
            let stamped = try b.contact(named: "Ada").modificationDate(of: .notes)
            #expect(abs(stamped.timeIntervalSince(start.addingTimeInterval(120))) < 1, "\(stamped)")

            // The other way round: B first, C a minute later; C wins.
            await clock.advance(by: .seconds(60))
            try b.edit("Bob") { $0.notes = "from B, first" }
            await clock.advance(by: .seconds(60))
            try c.edit("Bob") { $0.notes = "from C, a minute later" }
            for device in [b, c, b, a] { try await device.sync() }
            for device in devices {
                #expect(try device.contact(named: "Bob").notes == "from C, a minute later")
            }
        }
    }

    @Test("a clock a day behind, before its device has saved anything: its edit still comes after what it fetched")
    func neverBackwards() async throws {
        try await withContactsDevices(2, clocks: [{ Date() }, { Date().addingTimeInterval(-86_400) }]) {
            _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.contacts.add(Contact(name: "Ada"))
            try await a.sync()
            try await b.sync()
            let seen = try b.contact(named: "Ada").lastModified
            // B's clock is a day behind and B has not saved anything yet: its edit still comes after.
            try b.edit("Ada") { $0.notes = "after" }
            #expect(try b.contact(named: "Ada").modificationDate(of: .notes) > seen)
        }
    }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
