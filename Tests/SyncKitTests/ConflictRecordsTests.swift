import Foundation
import SyncCore
import SyncKit
import SyncTesting
import Synchronization
import Testing

/// An app that sends the records it is given, once each, and keeps what the server answered.
private final class GivenRecordsDevice: SyncEngineDelegate {
    let toSend = Mutex<[Record]>([])
    let saved = Mutex<[Record]>([])
    let failures = Mutex<[SyncError]>([])
    private let engineBox = Mutex<SyncEngine?>(nil)
    var engine: SyncEngine { engineBox.withLock { $0! } }

    init(server: TestServer, client: TestClient) {
        let configuration = SyncEngine.Configuration(
            database: Database(
                serverURL: URL(string: server.baseURL)!, credentials: .token(client.token!), scope: .private,
                deviceID: "given", keyring: TestDevice.keyring()),
            stateSerialization: nil, delegate: self)
        var made = configuration
        made.automaticallySync = false
        let engine = SyncEngine(made)
        engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: TestDevice.zoneID))])
        engineBox.withLock { $0 = engine }
    }

    func send(_ record: Record) async throws {
        toSend.withLock { $0 = [record] }
        engine.state.hasPendingUntrackedChanges = true
        try await engine.sendChanges()
    }

    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
        guard case .sentRecordZoneChanges(let sent) = event else { return }
        saved.withLock { $0 += sent.savedRecords }
        failures.withLock { $0 += sent.failedRecordSaves.map(\.error) }
        syncEngine.state.hasPendingUntrackedChanges = false
    }

    func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.RecordZoneChangeBatch?
    {
        let records = toSend.withLock { records in
            defer { records = [] }
            return records
        }
        return records.isEmpty ? nil : SyncEngine.RecordZoneChangeBatch(recordsToSave: records)
    }
}

@Suite("SyncEngine: a conflict carries the server's, the client's and the ancestor record")
struct ConflictRecordsTests {
    @Test("serverRecordChanged holds serverRecord, clientRecord and ancestorRecord (CKError's three)")
    func threeRecords() async throws {
        try await TestServer.with { server in
            let account = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
            let a = GivenRecordsDevice(server: server, client: account)
            let b = GivenRecordsDevice(server: server, client: account)
            let first = Record(recordType: "Note", recordID: TestDevice.recordID("n1"))
            first["title"] = "base"
            first["pinned"] = 1
            first.encryptedValues["body"] = "secret"
            try await a.send(first)
            let base = try #require(a.saved.withLock { $0.first })

            // Both devices change the record they last saw; B's reaches the server first.
            let fromB = Record(base.value)
            fromB["title"] = "from b"
            try await b.send(fromB)
            let fromA = Record(base.value)
            fromA["title"] = "from a"
            fromA.encryptedValues["body"] = "edited"
            await #expect(throws: SyncError.self) { try await a.send(fromA) }

            let error = try #require(a.failures.withLock { $0.first })
            #expect(error.code == .serverRecordChanged)
            #expect(error.serverRecord?["title"] as? String == "from b")
            #expect(error.clientRecord?["title"] as? String == "from a")
            #expect(error.clientRecord?.encryptedValues["body"] as? String == "edited")
            let ancestor = try #require(error.ancestorRecord)
            #expect(ancestor["title"] as? String == "base")
            #expect(ancestor.encryptedValues["body"] as? String == "secret")
            #expect(ancestor["pinned"] as? Int64 == 1)
            #expect(ancestor.recordChangeTag == base.recordChangeTag)
            #expect(ancestor.changedKeys().isEmpty)
        }
    }

    @Test("a record never saved has no ancestor")
    func newRecordHasNoAncestor() {
        var value = RecordValue(recordType: "Note", recordID: TestDevice.recordID("n2"))
        value["title"] = "new"
        #expect(value.ancestor == nil)
    }
}
