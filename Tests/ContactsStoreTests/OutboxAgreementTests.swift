import ContactsTesting
import Foundation
import GRDB
import SyncCore
import SyncKit
import SyncTesting
import Testing

@testable import ContactsModel
@testable import ContactsStore

/// The outbox is the one list of record changes to send: the engines hold none of them, only hear that
/// there are some (`hasPendingUntrackedChanges`), and follow its zone changes. Whatever a device does,
/// the two agree.
@Suite("Contacts: the outbox is the one list of what is pending")
struct OutboxAgreementTests {
    @Test("after edits, imports, syncs, conflicts, deletions and a wiped server, the engines follow the outbox")
    func engineFollowsTheOutbox() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try expectAgreement(a, "after sign-up")

            for name in ["Ada", "Grace", "Edsger"] { try a.contacts.add(Contact(name: name)) }
            try a.edit("Grace") { $0.notes = "Compilers" }
            try a.contacts.delete(a.contact(named: "Edsger").id)
            try expectAgreement(a, "after adding, editing and deleting", pending: 3)

            let report = try a.interchange.importVCards(
                "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Barbara\r\nEND:VCARD\r\nBEGIN:VCARD\r\nVERSION:4.0\r\nFN:Alan\r\nEND:VCARD\r\n"
            )
            #expect(report.imported == 2)
            try expectAgreement(a, "after an import", pending: 5)

            try await a.sync()
            try expectAgreement(a, "after a sync", pending: 0)
            try await b.sync()
            try expectAgreement(b, "after the first download", pending: 0)

            // A conflict: both rename Ada; B also deletes Alan, which A edits.
            try b.edit("Ada") { $0.name = "Ada King" }
            try b.contacts.delete(b.contact(named: "Alan").id)
            try a.edit("Ada") { $0.notes = "Analytical Engine" }
            try a.edit("Alan") { $0.notes = "Enigma" }
            try expectAgreement(b, "B with two changes", pending: 2)
            try await b.sync()
            try expectAgreement(b, "B after sending", pending: 0)
            try await a.sync()
            try expectAgreement(a, "A after merging and sending", pending: 0)
            try await b.sync()
            try expectAgreement(b, "B after fetching the merge", pending: 0)
            #expect(a.names == b.names)
            #expect(a.names.contains("Alan"), "the edit made on A wins over the delete made on B")

            try await a.account.deleteServerData()
            try expectAgreement(a, "after deleting the server's data", pending: 0)
            try await b.sync()
            try expectAgreement(b, "after the zone's deletion reached B", pending: 0)
            #expect(b.names.isEmpty)
        }
    }

    @Test("saves of contacts no longer stored leave the outbox, however many lead it, and the rest go up")
    func orphanedSavesArePassedOver() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.sync()
            for index in 0..<1_000 { try a.contacts.add(Contact(name: String(format: "Person %04d", index))) }
            // As an older release could leave them: the first 950 contacts gone, their saves still queued.
            try await a.store.queue.write { db in
                try db.execute(sql: "DELETE FROM contact WHERE sortKey < 'person 0950'")
            }
            #expect(try a.store.pendingCount() == 1_000)
            try await a.sync()
            #expect(try a.store.pendingCount() == 0)
            #expect(!a.engine.state.hasPendingUntrackedChanges)
            try await b.sync()
            #expect(b.names == (950..<1_000).map { String(format: "Person %04d", $0) }, "the 50 still stored went up")
        }
    }

    @Test("an edit made while its contact's batch is on its way waits for the answer, then goes up once")
    func editWhileInFlight() async throws {
        try await withContactsDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.contacts.add(Contact(name: "Ada"))
            let gate = server.faults.closeGate(pathPrefix: "/v1/databases/private/records/modify")
            let sync = Task { try await a.sync() }
            try await gate.waitUntilHeld(timeout: .seconds(120))
            try a.edit("Ada") { $0.notes = "Analytical Engine" }
            gate.open()
            try await sync.value
            #expect(try a.store.pendingCount() == 1, "the edit was not sent beside the version on its way")
            #expect(a.engine.state.hasPendingUntrackedChanges)
            try await a.sync()
            #expect(try a.store.pendingCount() == 0)
            #expect(!a.engine.state.hasPendingUntrackedChanges)
            try await b.sync()
            #expect(try b.contact(named: "Ada").notes == "Analytical Engine")
            #expect(try a.store.conflicts().isEmpty && b.store.conflicts().isEmpty, "one version after the other")
        }
    }

    @Test("a send takes the outbox in the order of the contacts' IDs: an edit the walk has not reached goes with it")
    func sendsInKeyOrder() async throws {
        try await withContactsDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            var names: [UUID: String] = [:]
            for index in 0..<1_000 {
                let name = String(format: "Person %04d", index)
                names[try a.contacts.add(Contact(name: name)).id] = name
            }
            let byID = names.sorted { $0.key.canonicalString < $1.key.canonicalString }.map(\.value)
            let (first, last) = (byID[0], byID[999])
            // Three batches of 400, 400 and 200: the first is held at the server, so the last, which holds the
            // highest ID, cannot be read before the first is answered.
            let gate = server.faults.closeGate(pathPrefix: "/v1/databases/private/records/modify")
            let sync = Task { try await a.sync() }
            try await gate.waitUntilHeld(timeout: .seconds(120))
            try a.edit(first) { $0.notes = "on its way" }
            try a.edit(last) { $0.notes = "not reached yet" }
            gate.open()
            try await sync.value
            #expect(try a.store.pendingCount() == 1, "only the edit of a contact on its way waits for the next send")
            try await b.sync()
            #expect(try b.contact(named: last).notes == "not reached yet")
            #expect(try b.contact(named: first).notes == "")
            try await a.sync()
            try await b.sync()
            #expect(try a.store.pendingCount() == 0)
            #expect(try b.contact(named: first).notes == "on its way")
            #expect(b.names.count == 1_000)
        }
    }

    /// The engines hold no record change, hear whether the outbox holds some for their database, and
    /// hold exactly its zone changes (and `pending` record changes are queued, when given).
    private func expectAgreement(_ device: ContactsDevice, _ when: String, pending: Int? = nil) throws {
        let outbox = try device.store.outbox()
        let outboxRecords = outbox.compactMap { if case .record(let c) = $0.change { c } else { nil } }
        let outboxZones = Set(outbox.compactMap { if case .zone(let c) = $0.change { Self.describe(c) } else { nil } })
        for (engine, scope) in [(device.engine, DatabaseScope.private), (device.sharedEngine, .shared)] {
            #expect(engine.state.pendingRecordZoneChanges.isEmpty, "\(device.name) \(when): \(scope) records")
            let queued = outboxRecords.contains { OutboxEntry(change: .record($0)).scope == scope }
            #expect(engine.state.hasPendingUntrackedChanges == queued, "\(device.name) \(when): \(scope) flag")
        }
        let engineZones = Set(device.engine.state.pendingDatabaseChanges.map(Self.describe))
        #expect(engineZones == outboxZones, "\(device.name) \(when): zones")
        if let pending { #expect(outboxRecords.count == pending, "\(device.name) \(when): pending records") }
    }

    private static func describe(_ change: SyncEngine.PendingDatabaseChange) -> String {
        switch change {
        case .saveZone(let zone): "save \(zone.zoneID.zoneName)"
        case .deleteZone(let zoneID): "delete \(zoneID.zoneName)"
        }
    }
}
