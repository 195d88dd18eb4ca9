import Foundation
import SyncCrypto
import SyncKit
import SyncServer
import SyncTesting
import Synchronization
import Testing

/// Record types an app declares always sealed (``SealedRecordTypes``), through `Database` and the engine
/// against the real server: nothing plain leaves, nothing plain or misplaced is handed over, each save seals
/// a version above the record it was built on, and an engine refuses a version below what its app saw.
@Suite("Sealed record types: forged, misplaced and rolled-back records refused")
struct SealedRecordTypesTests {
    static let zoneID = RecordZone.ID(zoneName: "Notes")
    static let sealed = SealedRecordTypes(["Note": .all, "Tagged": .fields(["secret"])])

    private func database(_ server: TestServer, _ account: TestClient) -> Database {
        Database(
            serverURL: URL(string: server.baseURL)!, credentials: .token(account.token!), deviceID: "desk",
            keyring: TestDevice.keyring(), sealedRecordTypes: Self.sealed)
    }

    /// A note whose text is sealed.
    private func note(_ name: String, _ text: String) -> Record {
        let record = Record(recordType: "Note", recordID: Record.ID(recordName: name, zoneID: Self.zoneID))
        record.encryptedValues["text"] = text
        return record
    }

    @Test("a save of a declared type with a plain value where a sealed one belongs is refused before it leaves")
    func plainIsNotSent() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let account = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
            let database = database(server, account)
            try await database.save(RecordZone(zoneID: Self.zoneID))
            let plain = note("n1", "sealed")
            plain["title"] = "plain by mistake"
            let tagged = Record(recordType: "Tagged", recordID: Record.ID(recordName: "t1", zoneID: Self.zoneID))
            tagged["label"] = "plain is fine here"
            tagged["secret"] = "not here"
            let (saves, _) = try await database.modifyRecords(
                saving: [plain, tagged, note("n2", "fine")], deleting: [], atomically: false)
            for id in [plain.recordID, tagged.recordID] {
                let error = #expect(throws: SyncError.self) { try saves[id]?.get() }
                #expect(error?.code == .invalidArguments)
                #expect(
                    error?.message.contains("set it through encryptedValues") == true, "\(String(describing: error))")
            }
            #expect(try saves[Record.ID(recordName: "n2", zoneID: Self.zoneID)]?.get().sealedVersion == 1)
            // Never reached the server.
            let stored = try await account.lookupRecords([plain.recordID, tagged.recordID])
            #expect(stored.records.isEmpty)
        }
    }

    @Test("a fetch by ID gives a forged or misplaced record as its recordTampered error, and the others as records")
    func lookupReportsEachRecord() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let account = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
            let database = database(server, account)
            try await database.save(RecordZone(zoneID: Self.zoneID))
            let names = ["plain", "moved", "fine", "untyped"]
            for name in names { _ = try await database.save(note(name, "text of \(name)")) }
            let ids = names.map { Record.ID(recordName: $0, zoneID: Self.zoneID) }
            var stored = try await account.lookupRecords(ids).records
            // With the account's token: one note's text in plain, one note's sealed text moved to another note.
            stored[0]["text"] = .string("forged")
            stored[1]["text"] = stored[2]["text"]
            var untyped = RecordValue(recordType: "Scratch", recordID: ids[3])
            untyped["text"] = .string("plain, and of a type nobody declared")
            _ = try await account.modifyRecords(ModifyRecordsRequest(saves: [stored[0], stored[1]]))
            _ = try await account.modifyRecords(ModifyRecordsRequest(saves: [], deletes: [ids[3]]))
            _ = try await account.modifyRecords(ModifyRecordsRequest(saves: [untyped]))

            let results = try await database.records(for: ids)
            func error(_ index: Int) -> SyncError? {
                guard case .failure(let error as SyncError)? = results[ids[index]] else { return nil }
                return error
            }
            #expect(error(0)?.code == .recordTampered)
            #expect(error(0)?.reason == .plainField)
            #expect(
                error(0)?.message.contains("its field 'text' arrived in plain") == true,
                "\(String(describing: error(0)))")
            #expect(error(1)?.code == .recordTampered)
            #expect(error(1)?.reason == .doesNotOpen)
            #expect(try results[ids[2]]?.get().encryptedValues["text"] as? String == "text of fine")
            // A type the app did not declare is handed over as it is.
            #expect(try results[ids[3]]?.get()["text"] as? String == "plain, and of a type nobody declared")
        }
    }

    @Test("each save seals one version above the record it was built on; archived system fields keep the version")
    func versionsGoUpFromTheLastKnownRecord() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let account = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
            let database = database(server, account)
            try await database.save(RecordZone(zoneID: Self.zoneID))
            let first = try await database.save(note("n", "one"))
            #expect(first.sealedVersion == 1)
            #expect(try await database.record(for: first.recordID).sealedVersion == 1)

            // Kept as archived system fields, rebuilt, changed and saved: version 2.
            let archiver = NSKeyedArchiver(requiringSecureCoding: true)
            first.encodeSystemFields(with: archiver)
            let unarchiver = try NSKeyedUnarchiver(forReadingFrom: archiver.encodedData)
            unarchiver.requiresSecureCoding = true
            let rebuilt = try #require(Record(coder: unarchiver))
            #expect(rebuilt.sealedVersion == 1)
            rebuilt.encryptedValues["text"] = "two"
            let second = try await database.save(rebuilt)
            #expect(second.sealedVersion == 2)

            // A save built on a stale record loses to the server's (a conflict); built on the server's record it
            // goes above it.
            first.encryptedValues["text"] = "stale"
            let conflict = await #expect(throws: SyncError.self) { try await database.save(first) }
            let serverRecord = try #require(conflict?.serverRecord)
            #expect(serverRecord.sealedVersion == 2)
            serverRecord.encryptedValues["text"] = "three"
            #expect(try await database.save(serverRecord).sealedVersion == 3)
        }
    }

    /// An engine's delegate that keeps what it was handed and what it was refused, and answers the versions
    /// it has seen.
    final class Device: SyncEngineDelegate {
        let fetched = Mutex<[Record.ID: Record]>([:])
        let refused = Mutex<[SyncEngine.Event.FetchedRecordZoneChanges.FailedRecordFetch]>([])
        let asked = Mutex<[[Record.ID]]>([])

        func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
            if case .sentRecordZoneChanges(let sent) = event { failedSaves.withLock { $0 += sent.failedRecordSaves } }
            guard case .fetchedRecordZoneChanges(let changes) = event else { return }
            fetched.withLock { fetched in
                for modification in changes.modifications {
                    fetched[modification.record.recordID] = modification.record
                }
            }
            refused.withLock { $0 += changes.failedRecordFetches }
        }

        /// The record to send next, if any, and the failed saves the engine reported.
        let toSend = Mutex<Record?>(nil)
        let failedSaves = Mutex<[SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave]>([])

        func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
            -> SyncEngine.RecordZoneChangeBatch?
        {
            toSend.withLock { record in
                defer { record = nil }
                return record.map { SyncEngine.RecordZoneChangeBatch(recordsToSave: [$0]) }
            }
        }

        func lastKnownSealedVersions(of recordIDs: [Record.ID], syncEngine: SyncEngine) async -> [Record.ID: UInt64] {
            asked.withLock { $0.append(recordIDs) }
            return fetched.withLock { fetched in
                recordIDs.reduce(into: [:]) { seen, id in seen[id] = fetched[id]?.sealedVersion }
            }
        }
    }

    @Test("the engine reports an earlier value served again as a failed fetch (rollback) and hands over the rest")
    func engineRefusesRollback() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let account = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
            let database = database(server, account)
            try await database.save(RecordZone(zoneID: Self.zoneID))
            let saved = try await database.save(note("n", "one"))
            let earlier = try #require(try await account.lookupRecords([saved.recordID]).records.first)
            saved.encryptedValues["text"] = "two"
            _ = try await database.save(saved)

            let device = Device()
            var reader = database
            reader.deviceID = "reader"
            var configuration = SyncEngine.Configuration(database: reader, stateSerialization: nil, delegate: device)
            configuration.automaticallySync = false
            configuration.schedulerProbes = []
            let engine = SyncEngine(configuration)
            try await engine.fetchChanges()
            #expect(device.fetched.withLock { $0[saved.recordID]?.encryptedValues["text"] as? String } == "two")
            #expect(device.fetched.withLock { $0[saved.recordID]?.sealedVersion } == 2)

            // The first value's sealed fields, saved again over the second: each opens for its place.
            var replay = try #require(try await account.lookupRecords([saved.recordID]).records.first)
            replay["text"] = earlier["text"]
            _ = try await account.modifyRecords(ModifyRecordsRequest(saves: [replay]))
            try await engine.fetchChanges()
            #expect(device.fetched.withLock { $0[saved.recordID]?.encryptedValues["text"] as? String } == "two")
            let refused = device.refused.withLock { $0 }
            #expect(refused.map(\.recordID) == [saved.recordID])
            #expect(refused.first?.error.code == .recordTampered)
            #expect(refused.first?.error.reason == .rollback)
            #expect(refused.first?.record.fields["text"] == earlier["text"], "the record as it arrived")
            #expect(device.asked.withLock { $0 } == [[saved.recordID], [saved.recordID]])
        }
    }

    @Test("a conflict whose server record is an earlier value served again comes without that record, saying why")
    func engineRefusesRollbackInAConflict() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let account = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
            let database = database(server, account)
            try await database.save(RecordZone(zoneID: Self.zoneID))
            let saved = try await database.save(note("n", "one"))
            let earlier = try #require(try await account.lookupRecords([saved.recordID]).records.first)
            saved.encryptedValues["text"] = "two"
            _ = try await database.save(saved)

            let device = Device()
            var writer = database
            writer.deviceID = "writer"
            var configuration = SyncEngine.Configuration(database: writer, stateSerialization: nil, delegate: device)
            configuration.automaticallySync = false
            configuration.schedulerProbes = []
            let engine = SyncEngine(configuration)
            try await engine.fetchChanges()
            let seen = try #require(device.fetched.withLock { $0[saved.recordID] })
            #expect(seen.sealedVersion == 2)

            // The server serves version 1 again; the device, not knowing, saves an edit built on version 2.
            var replay = try #require(try await account.lookupRecords([saved.recordID]).records.first)
            replay["text"] = earlier["text"]
            _ = try await account.modifyRecords(ModifyRecordsRequest(saves: [replay]))
            seen.encryptedValues["text"] = "three"
            device.toSend.withLock { $0 = seen }
            engine.state.add(pendingRecordZoneChanges: [.saveRecord(saved.recordID)])
            let thrown = await #expect(throws: SyncError.self) { try await engine.sendChanges() }
            #expect(thrown?.code == .serverRecordChanged)
            let failure = try #require(device.failedSaves.withLock { $0.first })
            #expect(failure.error.code == .serverRecordChanged)
            #expect(failure.error.serverRecord == nil, "the earlier value is not handed over as the server's record")
            #expect(failure.error.message.contains("older than version 2"), "\(failure.error.message)")
        }
    }
}
