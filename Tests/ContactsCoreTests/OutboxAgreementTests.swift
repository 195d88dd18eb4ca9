import Foundation
import GRDB
import SyncCore
import SyncKit
import Testing

@testable import ContactsCore

/// The outbox is the one record of what is pending; the engine's pending lists follow it. Whatever a
/// device does, the two list the same changes.
@Suite("Contacts: the engine's pending changes are the outbox's")
struct OutboxAgreementTests {
    @Test("after edits, imports, syncs, conflicts, deletions and a wiped server, engine and outbox agree")
    func engineFollowsTheOutbox() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try expectAgreement(a, "after sign-up")

            for name in ["Ada", "Grace", "Edsger"] { try a.add(Contact(name: name)) }
            try a.edit("Grace") { $0.notes = "Compilers" }
            try a.delete(a.contact(named: "Edsger").id)
            try expectAgreement(a, "after adding, editing and deleting", pending: 3)

            let report = try a.importVCards(
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
            try b.delete(b.contact(named: "Alan").id)
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

            try await a.deleteServerData()
            try expectAgreement(a, "after deleting the server's data", pending: 0)
            try await b.sync()
            try expectAgreement(b, "after the zone's deletion reached B", pending: 0)
            #expect(b.names.isEmpty)
        }
    }

    @Test("changes the outbox no longer holds are passed over, however many lead the engine's list")
    func staleChangesArePassedOver() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.sync()
            for index in 0..<1_000 { try a.add(Contact(name: String(format: "Person %04d", index))) }
            // As if settled before a crash that kept the engine's copy: the first 950 leave the outbox only.
            try await a.store.queue.write { db in
                try db.execute(
                    sql:
                        "DELETE FROM outbox WHERE rowid IN (SELECT rowid FROM outbox WHERE key LIKE 'record:%' ORDER BY rowid LIMIT 950)"
                )
            }
            #expect(a.engine.state.pendingRecordZoneChanges.count == 1_000)
            try await a.sync()
            #expect(a.engine.state.pendingRecordZoneChanges.count == 0)
            #expect(try a.store.pendingCount() == 0)
            try await b.sync()
            #expect(b.names == (950..<1_000).map { String(format: "Person %04d", $0) }, "the 50 still queued went up")
        }
    }

    /// The engine's pending record and zone changes are exactly the outbox's (and `pending` of them
    /// when given).
    private func expectAgreement(_ device: ContactsDevice, _ when: String, pending: Int? = nil) throws {
        let outbox = try device.store.outbox()
        let outboxRecords = Set(outbox.compactMap { if case .record(let c) = $0.change { c } else { nil } })
        let outboxZones = Set(outbox.compactMap { if case .zone(let c) = $0.change { Self.describe(c) } else { nil } })
        let engineRecords = Set(device.engine.state.pendingRecordZoneChanges)
        let engineZones = Set(device.engine.state.pendingDatabaseChanges.map(Self.describe))
        #expect(engineRecords == outboxRecords, "\(device.name) \(when): records")
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
