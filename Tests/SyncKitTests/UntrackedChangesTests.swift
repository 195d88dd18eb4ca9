import Foundation
import SyncCore
import SyncKit
import SyncTesting
import Synchronization
import Testing

/// An app that keeps its own list of changes to send, as CKSyncEngine allows: the engine tracks none of
/// them and hears only that there are some (`hasPendingUntrackedChanges`).
final class OwnListDevice: SyncEngineDelegate {
    /// Names to save, by record name, in the order queued.
    let queued = Mutex<[(id: String, name: String)]>([])
    /// The records offered in the current send.
    let offered = Mutex<Set<String>>([])
    /// How many batches the server answered, and the errors of the saves it refused.
    let answers = Mutex((batches: 0, failures: [SyncError.Code]()))
    /// Whether the app offers every queued record in every batch, even one that failed in this send.
    let forgetful: Bool
    private let engineBox = Mutex<SyncEngine?>(nil)

    var engine: SyncEngine { engineBox.withLock { $0! } }

    init(server: TestServer, client: TestClient, automaticallySync: Bool = false, forgetful: Bool = false) {
        self.forgetful = forgetful
        var configuration = SyncEngine.Configuration(
            database: Database(
                serverURL: URL(string: server.baseURL)!, credentials: .token(client.token!), scope: .private,
                deviceID: "own-list", keyring: TestDevice.keyring()),
            stateSerialization: nil, delegate: self)
        configuration.automaticallySync = automaticallySync
        configuration.schedulerProbes = []
        configuration.schedulerPolicy = TestDevice.pushOnly
        let engine = SyncEngine(configuration)
        engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: TestDevice.zoneID))])
        engineBox.withLock { $0 = engine }
    }

    func queue(id: String, name: String) {
        queued.withLock { $0.append((id, name)) }
        engine.state.hasPendingUntrackedChanges = true
    }

    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
        switch event {
        case .willSendChanges:
            offered.withLock { $0 = [] }
        case .sentRecordZoneChanges(let sent):
            answers.withLock { answers in
                answers.batches += 1
                answers.failures += sent.failedRecordSaves.map(\.error.code)
            }
            let saved = Set(sent.savedRecords.map(\.recordID.recordName))
            let isEmpty = queued.withLock { queued in
                queued.removeAll { saved.contains($0.id) }
                return queued.isEmpty
            }
            if isEmpty { syncEngine.state.hasPendingUntrackedChanges = false }
        default:
            break
        }
    }

    func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.RecordZoneChangeBatch?
    {
        let next = offered.withLock { offered in
            let next = queued.withLock { $0 }.filter { forgetful || !offered.contains($0.id) }.prefix(100)
            offered.formUnion(next.map(\.id))
            return next
        }
        guard !next.isEmpty else { return nil }
        let records = next.map { change in
            let record = Record(recordType: "Contact", recordID: TestDevice.recordID(change.id))
            record.encryptedValues["name"] = change.name
            record.encryptedValues["userModificationDate"] = Date()
            return record
        }
        return SyncEngine.RecordZoneChangeBatch(recordsToSave: records, recordIDsToDelete: [])
    }
}

@Suite("SyncEngine: changes the app tracks itself")
struct UntrackedChangesTests {
    @Test("sendChanges asks the delegate for them batch after batch; the engine holds none of them")
    func sentInBatches() async throws {
        try await withDevices(1) { server, account, devices in
            let a = OwnListDevice(server: server, client: account)
            for index in 0..<250 { a.queue(id: "c\(index)", name: "Contact \(index)") }
            #expect(a.engine.state.pendingRecordZoneChanges.isEmpty)
            #expect(a.engine.state.hasPendingUntrackedChanges)
            try await a.engine.sendChanges()
            #expect(a.answers.withLock { $0.batches } == 3)
            #expect(a.queued.withLock { $0.isEmpty } && !a.engine.state.hasPendingUntrackedChanges)
            try await devices[0].engine.fetchChanges()
            #expect(devices[0].names == (0..<250).map { "Contact \($0)" }.sorted())
        }
    }

    @Test("a change that failed is not sent again in the same send, even when the app offers it again")
    func failedChangeNotResent() async throws {
        try await withDevices(1) { server, account, devices in
            devices[0].save(id: "x", name: "On the server")
            try await devices[0].engine.sendChanges()
            // Saved without the server record's change tag: refused with serverRecordChanged, every time.
            let a = OwnListDevice(server: server, client: account, forgetful: true)
            a.queue(id: "x", name: "Without a change tag")
            a.queue(id: "y", name: "New")
            await #expect(throws: SyncError.self) { try await a.engine.sendChanges() }
            let answers = a.answers.withLock { $0 }
            #expect(answers.batches == 1, "one request; the refused save was not offered to the server again")
            #expect(answers.failures == [.serverRecordChanged])
            try await devices[0].engine.fetchChanges()
            #expect(devices[0].names == ["New", "On the server"])
        }
    }

    @Test("a device that syncs by itself sends them once the app says there are some")
    func automaticSend() async throws {
        try await withDevices(1, transport: .loopback) { server, account, devices in
            let a = OwnListDevice(server: server, client: account, automaticallySync: true)
            a.queue(id: "ada", name: "Ada")
            a.queue(id: "grace", name: "Grace")
            try await waitUntil("the device's own changes reach the server", timeout: .seconds(120)) {
                try await devices[0].engine.fetchChanges()
                return devices[0].names == ["Ada", "Grace"]
            } observed: {
                "another device sees \(devices[0].names); still queued: \(a.queued.withLock { $0.map(\.id) })"
            }
            try await waitUntil("the device says nothing is left", timeout: .seconds(120)) {
                !a.engine.state.hasPendingUntrackedChanges
            }
        }
    }
}
