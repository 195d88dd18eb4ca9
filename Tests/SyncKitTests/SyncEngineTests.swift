import Foundation
import SyncCore
import SyncKit
import SyncServer
import SyncTesting
import Synchronization
import Testing

/// Two or more devices, one real server: through its router in this process, or over loopback for
/// tests that need push (`transport: .loopback`).
func withDevices(
    _ count: Int = 2, configuration: SyncServerConfiguration = .testing,
    transport: TestServer.Transport = .inProcess, _ body: (TestServer, TestClient, [TestDevice]) async throws -> Void
) async throws {
    try await TestServer.with(configuration: configuration, transport: transport) { server in
        let account = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
        let devices = (0..<count).map { TestDevice(name: "device-\($0)", server: server, client: account) }
        try await body(server, account, devices)
    }
}

@Suite("SyncEngine: Apple's sample tests, ported")
struct SampleTests {
    @Test("sync contacts from one device to another", arguments: [1, 10, 444])
    func syncContacts(count: Int) async throws {
        try await withDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            for index in 0..<count { a.save(id: "c\(index)", name: "Contact \(index)") }
            try await a.engine.sendChanges()
            #expect(a.engine.state.pendingRecordZoneChanges.isEmpty)
            #expect(b.names.isEmpty)
            try await b.engine.fetchChanges()
            #expect(b.names == a.names)
            #expect(b.names.count == count)
        }
    }

    @Test("rename back and forth between two devices")
    func rename() async throws {
        try await withDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            a.save(id: "x", name: "Name 1")
            try await a.engine.sendChanges()
            try await b.engine.fetchChanges()
            #expect(b.names == ["Name 1"])
            b.save(id: "x", name: "Name 2")
            try await b.engine.sendChanges()
            try await a.engine.fetchChanges()
            #expect(a.names == ["Name 2"])
            a.save(id: "x", name: "Name 3")
            try await a.engine.sendChanges()
            try await b.engine.fetchChanges()
            #expect(b.names == ["Name 3"])
        }
    }

    @Test("zone deleted behind the engine's back: the first send throws, the second succeeds")
    func zoneNotFound() async throws {
        try await withDevices(3) { _, account, devices in
            let a = devices[0]
            a.save(id: "x", name: "Before")
            try await a.engine.sendChanges()
            let created = try #require(a.contacts.withLock { $0["x"]?.lastKnownRecord?.creationDate })
            let other = devices[1]
            try await other.engine.fetchChanges()
            #expect(other.names == ["Before"])
            // Deleted through the engine's database, as the sample's test does.
            try await a.engine.database.deleteRecordZone(withID: TestDevice.zoneID)
            try await other.engine.fetchChanges()
            #expect(other.zoneDeletionReasons.withLock { $0 } == [.deleted])
            // Server dates are kept to the millisecond: a record created again must be created later.
            try await waitUntil("the clock is past the first creation date") {
                Date().timeIntervalSince(created) > 0.002
            }
            a.save(id: "x", name: "After")
            await #expect(throws: SyncError.self) { try await a.engine.sendChanges() }
            #expect(a.contacts.withLock { $0["x"]?.lastKnownRecord } == nil)
            try await a.engine.sendChanges()
            let fresh = devices[2]
            try await fresh.engine.fetchChanges()
            #expect(fresh.names == ["After"])
            let recreated = fresh.contacts.withLock { $0["x"]?.lastKnownRecord?.creationDate }
            #expect(
                recreated != nil && recreated != created, "created \(created), then \(String(describing: recreated))")
        }
    }

    @Test("record deleted behind the engine's back: unknownItem, then re-uploaded")
    func unknownItem() async throws {
        try await withDevices(3) { _, account, devices in
            let a = devices[0]
            a.save(id: "x", name: "Before")
            try await a.engine.sendChanges()
            try await a.engine.database.deleteRecord(withID: TestDevice.recordID("x"))
            a.save(id: "x", name: "After")
            await #expect(throws: SyncError.self) { try await a.engine.sendChanges() }
            try await a.engine.sendChanges()
            let fresh = devices[2]
            try await fresh.engine.fetchChanges()
            #expect(fresh.names == ["After"])
        }
    }

    @Test("conflict: the newer user edit wins on both devices, whoever saves first", arguments: [true, false])
    func conflict(winnerSavesFirst: Bool) async throws {
        try await withDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            a.save(id: "x", name: "Original")
            try await a.engine.sendChanges()
            try await b.engine.fetchChanges()

            let now = Date()
            a.save(id: "x", name: "Winner", date: now.addingTimeInterval(1))
            b.save(id: "x", name: "Loser", date: now)
            let (first, second) = winnerSavesFirst ? (a, b) : (b, a)
            try await first.engine.sendChanges()
            await #expect(throws: SyncError.self) { try await second.engine.sendChanges() }
            #expect(second.engine.state.pendingRecordZoneChanges.count == 1)
            #expect(first.engine.state.pendingRecordZoneChanges.isEmpty)
            try await second.engine.sendChanges()
            try await first.engine.fetchChanges()
            try await second.engine.fetchChanges()
            #expect(a.names == ["Winner"])
            #expect(b.names == ["Winner"])
        }
    }
}

@Suite("SyncEngine: behaviour")
struct EngineBehaviourTests {
    @Test("pending changes de-duplicate as CKSyncEngine's do")
    func deduplication() async throws {
        try await withDevices(1) { _, _, devices in
            let state = devices[0].engine.state
            let a = TestDevice.recordID("a")
            let b = TestDevice.recordID("b")
            state.add(pendingRecordZoneChanges: [.saveRecord(a), .saveRecord(b), .saveRecord(a)])
            #expect(state.pendingRecordZoneChanges == [.saveRecord(a), .saveRecord(b)])
            state.add(pendingRecordZoneChanges: [.deleteRecord(a)])
            #expect(state.pendingRecordZoneChanges == [.saveRecord(b), .deleteRecord(a)])
            state.add(pendingRecordZoneChanges: [.saveRecord(a)])
            #expect(state.pendingRecordZoneChanges == [.saveRecord(b), .saveRecord(a)])
            state.remove(pendingRecordZoneChanges: [.deleteRecord(b)])
            #expect(state.pendingRecordZoneChanges.count == 2, "removing a different change leaves the save")

            let zone = RecordZone(zoneName: "Z")
            state.add(pendingDatabaseChanges: [.saveZone(zone), .deleteZone(zone.zoneID)])
            #expect(state.pendingDatabaseChanges == [.deleteZone(zone.zoneID)])
            state.add(pendingDatabaseChanges: [.saveZone(zone)])
            #expect(state.pendingDatabaseChanges == [.saveZone(zone)])
        }
    }

    @Test("pending changes keep their order through thousands of adds, replacements and removals")
    func orderAfterChurn() async throws {
        try await withDevices(1) { _, _, devices in
            let state = devices[0].engine.state
            let ids = (0..<3_000).map { TestDevice.recordID("r\($0)") }
            state.add(pendingRecordZoneChanges: ids.map { .saveRecord($0) })
            // Remove two of every three, replace some of the rest with deletes (which move to the end).
            state.remove(pendingRecordZoneChanges: ids.indices.filter { $0 % 3 != 0 }.map { .saveRecord(ids[$0]) })
            state.add(pendingRecordZoneChanges: ids.indices.filter { $0 % 9 == 0 }.map { .deleteRecord(ids[$0]) })
            state.add(pendingRecordZoneChanges: [.saveRecord(ids[3])])  // already pending: keeps its place

            let kept = ids.indices.filter { $0 % 3 == 0 && $0 % 9 != 0 }.map {
                SyncEngine.PendingRecordZoneChange.saveRecord(ids[$0])
            }
            let deleted = ids.indices.filter { $0 % 9 == 0 }.map {
                SyncEngine.PendingRecordZoneChange.deleteRecord(ids[$0])
            }
            #expect(state.pendingRecordZoneChanges == kept + deleted)
            // The first few, as a delegate asks for the next batch: the same order, filtered, cut at the limit.
            #expect(state.pendingRecordZoneChanges(first: 5) == Array(kept.prefix(5)))
            let isDelete: (SyncEngine.PendingRecordZoneChange) -> Bool = {
                if case .deleteRecord = $0 { true } else { false }
            }
            #expect(state.pendingRecordZoneChanges(first: 7, where: isDelete) == Array(deleted.prefix(7)))
            #expect(state.pendingRecordZoneChanges(first: 100_000) == kept + deleted)
            state.remove(pendingRecordZoneChanges: kept)
            #expect(state.pendingRecordZoneChanges == deleted)
        }
    }

    @Test("a fetch reports what other devices changed, not the versions this engine just saved")
    func ownSavesAreNotFetchedBack() async throws {
        try await withDevices { server, account, devices in
            let (a, b) = (devices[0], devices[1])
            for id in ["x", "y", "z"] { a.save(id: id, name: "Saved by A \(id)") }
            try await a.engine.sendChanges()
            try await a.engine.fetchChanges()
            #expect(a.fetchedRecordNames.withLock { $0 }.isEmpty, "A's own saves are not reported back to A")

            try await b.engine.fetchChanges()
            b.save(id: "y", name: "Renamed by B")
            try await b.engine.sendChanges()
            a.save(id: "z", name: "Renamed by A")
            try await a.engine.sendChanges()
            try await a.engine.fetchChanges()
            #expect(a.fetchedRecordNames.withLock { $0 } == ["y"], "only B's change reaches A")
            #expect(a.names == ["Renamed by A", "Renamed by B", "Saved by A x"])

            // A new engine (a relaunch with no saved state) is told everything, its own saves included.
            let relaunched = TestDevice(name: "device-0", server: server, client: account)
            try await relaunched.engine.fetchChanges()
            #expect(relaunched.fetchedRecordNames.withLock { $0 }.sorted() == ["x", "y", "z"])
            #expect(relaunched.names == ["Renamed by A", "Renamed by B", "Saved by A x"])
        }
    }

    @Test("a saved record the engine reports is the server's: the fields sent, the server's system fields")
    func savedRecordsAreTheServers() async throws {
        try await withDevices(1) { server, account, devices in
            let a = devices[0]
            a.save(id: "x", name: "Grace", date: Date(timeIntervalSinceReferenceDate: 123_456.789))
            try await a.engine.sendChanges()
            a.save(id: "x", name: "Grace Hopper")
            try await a.engine.sendChanges()
            let saved = a.savedRecords.withLock { $0 }
            #expect(saved.map(\.recordID.recordName) == ["x", "x"])

            let reader = Container(
                identifier: "iCloud.com.example.Contacts", serverURL: URL(string: server.baseURL)!,
                credentials: .token(account.token!), keyring: TestDevice.keyring()
            ).privateCloudDatabase
            let onServer = try await reader.record(for: Record.ID(recordName: "x", zoneID: TestDevice.zoneID))
            let last = try #require(saved.last)
            #expect(last.value == onServer.value, "fields and system fields as the server holds them")
            #expect(last.encryptedValues["name"] as? String == "Grace Hopper")
            #expect(last.changedKeys().isEmpty)
            #expect(last.recordChangeTag != saved.first?.recordChangeTag)
            #expect(last.creationDate == saved.first?.creationDate)
        }
    }

    @Test("send and fetch emit CKSyncEngine's events in order")
    func eventOrder() async throws {
        try await withDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            a.save(id: "x", name: "Grace")
            try await a.engine.sendChanges()
            let sendEvents = a.eventLog.withLock { $0 }.filter { $0 != "stateUpdate" }
            #expect(
                sendEvents == [
                    "accountChange", "willSendChanges", "sentDatabaseChanges", "sentRecordZoneChanges",
                    "didSendChanges",
                ])
            try await b.engine.fetchChanges()
            let fetchEvents = b.eventLog.withLock { $0 }.filter { $0 != "stateUpdate" }
            #expect(
                fetchEvents == [
                    "accountChange", "willFetchChanges", "fetchedDatabaseChanges", "willFetchRecordZoneChanges",
                    "fetchedRecordZoneChanges", "didFetchRecordZoneChanges", "didFetchChanges",
                ])
            #expect(
                b.eventLog.withLock { $0 }.last == "stateUpdate" || b.eventLog.withLock { $0 }.last == "didFetchChanges"
            )
        }
    }

    @Test("restart from a saved state with pending changes: nothing lost, nothing sent twice")
    func restartFromSerialization() async throws {
        try await withDevices { server, account, devices in
            let (a, b) = (devices[0], devices[1])
            a.save(id: "x", name: "Sent")
            try await a.engine.sendChanges()
            a.save(id: "y", name: "Pending")
            // The coalesced stateUpdate reaches the delegate, which persists it as an app would.
            let pendingY: [SyncEngine.PendingRecordZoneChange] = [.saveRecord(TestDevice.recordID("y"))]
            try await waitUntil("the delegate saved a state with Pending pending") {
                a.savedState.withLock { $0 }?.pendingRecordZoneChanges == pendingY
            } observed: {
                "saved pending: \(String(describing: a.savedState.withLock { $0 }?.pendingRecordZoneChanges))"
            }
            let saved = try #require(a.savedState.withLock { $0 })
            let decoded = try JSONDecoder().decode(
                SyncEngine.State.Serialization.self, from: JSONEncoder().encode(saved))
            #expect(decoded == saved && decoded.pendingRecordZoneChanges == pendingY, "the state survives JSON")

            let restarted = TestDevice(name: "device-0", server: server, client: account, state: saved)
            restarted.contacts.withLock { $0 = a.contacts.withLock { $0 } }
            try await restarted.engine.sendChanges()
            #expect(!restarted.eventLog.withLock { $0 }.contains("accountChange"), "same account: no account change")
            try await b.engine.fetchChanges()
            #expect(b.names == ["Pending", "Sent"])
            let all = try await account.fetchAllZoneChanges(TestDevice.zoneID)
            #expect(all.modifications.count == 2)
        }
    }

    @Test("calling sendChanges from inside handleEvent fails loudly instead of deadlocking")
    func reentrancy() async throws {
        final class Reentrant: SyncEngineDelegate {
            let caught = Synchronization.Mutex<SyncError?>(nil)
            func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
                if case .willFetchChanges = event {
                    do { try await syncEngine.sendChanges() } catch let error as SyncError {
                        caught.withLock { $0 = error }
                    } catch {}
                }
            }
            func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
                -> SyncEngine.RecordZoneChangeBatch?
            { nil }
        }
        try await withDevices(0) { server, account, _ in
            let delegate = Reentrant()
            var configuration = SyncEngine.Configuration(
                database: Database(serverURL: URL(string: server.baseURL)!, credentials: .token(account.token!)),
                stateSerialization: nil, delegate: delegate)
            configuration.automaticallySync = false
            let engine = SyncEngine(configuration)
            try await engine.fetchChanges()
            #expect(delegate.caught.withLock { $0 }?.message.contains("Task.detached") == true)
        }
    }

    @Test("with 30 % of requests failing (503, 429, dropped), 1,000 records arrive exactly once")
    func faultTolerance() async throws {
        try await withDevices { server, account, devices in
            let (a, b) = (devices[0], devices[1])
            server.faults.plan = .mixed(failureRate: 0.3, retryAfter: 0.01)
            for index in 0..<1000 { a.save(id: "c\(index)", name: "Contact \(index)") }
            var attempts = 0
            while !a.engine.state.pendingRecordZoneChanges.isEmpty && attempts < 20 {
                attempts += 1
                try? await a.engine.sendChanges()
            }
            #expect(a.engine.state.pendingRecordZoneChanges.isEmpty)
            var fetched = false
            for _ in 0..<20 where !fetched {
                do {
                    try await b.engine.fetchChanges()
                    fetched = true
                } catch {}
            }
            #expect(server.faults.counts.failures >= 3, "faults were injected: \(server.faults.counts)")
            server.faults.plan = .none
            #expect(b.names.count == 1000)
            let all = try await account.fetchAllZoneChanges(TestDevice.zoneID)
            #expect(all.modifications.count == 1000, "each record stored once")
            #expect(Set(all.modifications.map { $0.recordChangeTag }).count == 1000)
            // Pages are requested ahead while the app takes the one before; a fetch that fails part way
            // resumes after the last page the app had: each record reached B once, in the server's order.
            #expect(b.fetchedRecordNames.withLock { $0 } == all.modifications.map(\.recordID.recordName))
        }
    }

    // How fast a push arrives is measured by `sync-bench engine`, not asserted here.
    @Test("push: device B sees A's change with no fetch call and no polling")
    func push() async throws {
        try await withDevices(0, transport: .loopback) { server, account, _ in
            let a = TestDevice(name: "a", server: server, client: account)
            let b = TestDevice(
                name: "b", server: server, client: account, automaticallySync: true, policy: TestDevice.pushOnly)
            try await waitUntil("B's push socket is connected") { b.engine.isPushConnected }
            a.save(id: "x", name: "Pushed")
            // A backs up now; B, which never polls, must learn of it by push alone.
            try await a.engine.sendChanges()
            try await waitUntil("B has A's contact") {
                b.names == ["Pushed"]
            } observed: {
                "B has \(b.names); B's scheduler: \(await b.engine.scheduler?.status.decision.description ?? "none")"
            }
            await b.engine.cancelOperations()
        }
    }

    @Test("signing in with another account wipes and switches; no credentials signs out")
    func accountSwitch() async throws {
        try await withDevices(1) { server, account, devices in
            let a = devices[0]
            a.save(id: "x", name: "Ada's")
            try await a.engine.sendChanges()
            let state = try #require(a.savedState.withLock { $0 })
            let bob = try await TestClient(baseURL: server.baseURL).signedUp(username: "bob")
            let asBob = TestDevice(name: "device-0", server: server, client: bob, state: state)
            asBob.contacts.withLock { $0 = a.contacts.withLock { $0 } }
            try await asBob.engine.fetchChanges()
            #expect(asBob.eventLog.withLock { $0 }.contains("accountChange"))
            #expect(asBob.names.isEmpty, "switching accounts wipes local data")

            var signedOut = SyncEngine.Configuration(
                database: Database(serverURL: URL(string: server.baseURL)!, credentials: .none),
                stateSerialization: state, delegate: a)
            signedOut.automaticallySync = false
            let engine = SyncEngine(signedOut)
            a.eventLog.withLock { $0 = [] }
            try await engine.fetchChanges()
            #expect(a.eventLog.withLock { $0 }.first == "accountChange")
            #expect(a.names.isEmpty)
            _ = account
        }
    }
}

@Suite("SyncEngine: recovery")
struct EngineRecoveryTests {
    @Test("a batch over the server's item limit is split and every record arrives")
    func limitExceededSplits() async throws {
        var configuration = SyncServerConfiguration.testing
        configuration.limits = ServerLimits(maximumItemsPerRequest: 40)
        try await withDevices(configuration: configuration) { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            for index in 0..<100 { a.save(id: "c\(index)", name: "Contact \(index)") }
            // The sample's batches hold up to 250 records: over the limit of 40.
            try await a.engine.sendChanges()
            #expect(a.engine.state.pendingRecordZoneChanges.isEmpty)
            try await b.engine.fetchChanges()
            #expect(b.names.count == 100)
        }
    }

    @Test("an expired zone token makes the engine fetch the zone from the start")
    func expiredTokenRefetches() async throws {
        try await withDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            a.save(id: "x", name: "One")
            a.save(id: "y", name: "Two")
            try await a.engine.sendChanges()
            try await b.engine.fetchChanges()
            a.delete(id: "y")
            a.save(id: "z", name: "Three")
            try await a.engine.sendChanges()
            // Forget the tombstone of "y": B's token now predates the kept history.
            try await server.store.compactHistory(
                tombstonesBefore: Date().addingTimeInterval(60), requestsBefore: Date())
            b.fetchedRecordNames.withLock { $0 = [] }
            try await b.engine.fetchChanges()
            #expect(b.names.contains("Three"))
            // "x" did not change since B's last fetch: only a fetch from the start brings it again.
            #expect(b.fetchedRecordNames.withLock { $0 }.sorted() == ["x", "z"])
            #expect(b.eventLog.withLock { $0 }.contains("didFetchRecordZoneChanges"))
        }
    }

    @Test(
        "tokens the server no longer accepts (their key rotated out) make the engine fetch the database and zone anew")
    func invalidTokensRefetch() async throws {
        let clock = TestClock()
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: Date())
        try await withDevices(configuration: configuration) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            a.save(id: "x", name: "One")
            try await a.engine.sendChanges()
            try await b.engine.fetchChanges()
            a.save(id: "z", name: "Two")
            try await a.engine.sendChanges()
            // Every token B holds is signed with key 1, refused from now on (no grace); the server
            // reads its keys again within a minute.
            let now = configuration.clock.now()
            try await server.store.rotateChangeTokenKey(now: now, previousValidUntil: now)
            await clock.advance(by: .seconds(61))
            b.fetchedRecordNames.withLock { $0 = [] }
            try await b.engine.fetchChanges()
            // "x" did not change since B's last fetch: only a fetch from the start brings it again.
            #expect(b.fetchedRecordNames.withLock { $0 }.sorted() == ["x", "z"])
            #expect(b.names.contains("Two"))
        }
    }

    @Test("the delegate's nextFetchChangesOptions can leave a zone for later")
    func nextFetchOptionsNarrowsScope() async throws {
        try await withDevices { _, account, devices in
            let (a, b) = (devices[0], devices[1])
            a.save(id: "x", name: "Grace")
            try await a.engine.sendChanges()
            try await b.engine.fetchChanges(.init(scope: .zoneIDs([RecordZone.ID(zoneName: "Other")])))
            #expect(b.names.isEmpty)
            #expect(b.engine.state.zoneIDsWithUnfetchedServerChanges == [TestDevice.zoneID])
            try await b.engine.fetchChanges()
            #expect(b.names == ["Grace"])
            #expect(b.engine.state.zoneIDsWithUnfetchedServerChanges.isEmpty)
            _ = account
        }
    }
}

@Suite("SyncEngine: data safety")
struct EngineDataSafetyTests {
    @Test("an edit queued while its earlier version is being sent stays pending and goes out next")
    func editDuringSendIsKept() async throws {
        try await withDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            a.save(id: "x", name: "First")
            try await a.engine.sendChanges()
            let gate = server.faults.closeGate(pathPrefix: "/v1/databases/private/records/modify")
            a.save(id: "x", name: "Second")
            async let sending: Void = a.engine.sendChanges()
            try await gate.waitUntilHeld()
            a.save(id: "x", name: "Third")  // while "Second" is on the server, not yet saved
            gate.open()
            try await sending
            #expect(a.engine.state.pendingRecordZoneChanges == [.saveRecord(TestDevice.recordID("x"))])
            try await a.engine.sendChanges()
            try await b.engine.fetchChanges()
            #expect(b.names == ["Third"])
        }
    }
}

@Suite("SyncEngine: its own saves")
struct EngineOwnSavesTests {
    @Test("a send whose answer never came: the saves it made come back in the next fetch")
    func unansweredSendIsFetchedBack() async throws {
        try await withDevices(1, transport: .loopback) { server, account, devices in
            let a = devices[0]
            a.save(id: "x", name: "Answered")
            try await a.engine.sendChanges()
            let gate = server.faults.closeGate(pathPrefix: "/v1/databases/private/records/modify")
            a.save(id: "y", name: "Never answered")
            let sending = Task { try await a.engine.sendChanges() }
            try await gate.waitUntilHeld()
            // The app gives up on the send (as a quit would); the server still applies it after.
            await a.engine.cancelOperations()
            _ = await sending.result
            gate.open()
            func onServer() async throws -> [String] {
                try await account.fetchAllZoneChanges(TestDevice.zoneID).modifications.map(\.recordID.recordName)
            }
            try await waitUntil("the held save is applied on the server") {
                try await onServer().contains("y")
            } observed: {
                "records on the server: \((try? await onServer()) ?? [])"
            }
            // The engine never heard of that save: it took a new writer ID, so the fetch brings what
            // the old one saved, y included (x too: harmless, the app has it already).
            try await a.engine.fetchChanges()
            #expect(a.fetchedRecordNames.withLock { $0 }.sorted() == ["x", "y"])
            #expect(a.names == ["Answered", "Never answered"])
        }
    }
}

@Suite("SyncEngine: push reconnection")
struct EnginePushReconnectionTests {
    @Test("after a server restart, a device syncing by itself recovers and hears pushes again")
    func reconnectsAfterRestart() async throws {
        let path = TemporaryFiles.path("reconnect", extension: "sqlite")
        defer { TemporaryFiles.removeSQLite(path) }
        // A port below the kernel's ephemeral range, so that no other test's server (port 0) takes
        // it while this one is down.
        let first = try await TestServer.start(storagePath: path, port: try LoopbackPort.unused())
        let account = try await TestClient(baseURL: first.baseURL).signedUp(username: "ada")
        let a = TestDevice(name: "a", server: first, client: account)
        // B never polls: what it hears, it hears by push.
        let b = TestDevice(
            name: "b", server: first, client: account, automaticallySync: true, policy: TestDevice.pushOnly)
        a.save(id: "x", name: "Before")
        try await a.engine.sendChanges()
        try await waitUntil("B has A's first contact") {
            b.names == ["Before"]
        } observed: {
            "B has \(b.names)"
        }

        try await first.stop()
        try await waitUntil("B sees its push socket closed") { !b.engine.isPushConnected }
        // The same port, as a restarted server would have; the old one may take a moment to let go of it.
        var restarted: TestServer?
        var refusal: (any Error)?
        try await waitUntil("a server listens on port \(first.port) again", poll: .milliseconds(100)) {
            do {
                restarted = try await TestServer.start(storagePath: path, port: first.port)
            } catch {
                refusal = error
            }
            return restarted != nil
        } observed: {
            "the last attempt failed with \(String(describing: refusal))"
        }
        let second = try #require(restarted)
        a.save(id: "y", name: "After")
        try await a.engine.sendChanges()
        // The push socket reconnects with backoff (at most 30 s apart) and fetches what it missed.
        try await waitUntil("B has A's contact from after the restart", timeout: .seconds(120)) {
            b.names == ["After", "Before"]
        } observed: {
            "B has \(b.names); push connected: \(b.engine.isPushConnected)"
        }
        // And the next change is pushed to it.
        a.save(id: "z", name: "Pushed")
        try await a.engine.sendChanges()
        try await waitUntil("B has the pushed contact") {
            b.names.contains("Pushed")
        } observed: {
            "B has \(b.names); push connected: \(b.engine.isPushConnected)"
        }
        #expect(b.names == ["After", "Before", "Pushed"])
        await b.engine.cancelOperations()
        try await second.stop()
    }
}

@Suite("SyncEngine: batches sent while the next is made")
struct PipelinedSendTests {
    @Test(
        "while the server holds one batch, the next is made and sent; the delegate is never called twice at once; everything arrives once"
    )
    func nextBatchWhileOneIsAnswered() async throws {
        try await withDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            let count = 3 * SyncEngine.RecordZoneChangeBatch.defaultMaximumCount
            for index in 0..<count { a.save(id: "c\(index)", name: "Contact \(index)") }
            let gate = server.faults.closeGate(pathPrefix: "/v1/databases/private/records/modify")
            let send = Task { try await a.engine.sendChanges() }
            // Two batches at the server at once: the second left before the first was answered.
            try await gate.waitUntilHeld(count: 2)
            // Outside the delegate, the changes on their way still count as pending.
            #expect(a.engine.state.pendingRecordZoneChanges.count == count)
            #expect(a.savedState.withLock { $0 }?.pendingRecordZoneChanges.count == count, "and are saved as pending")
            gate.open()
            try await send.value
            #expect(a.engine.state.pendingRecordZoneChanges.isEmpty)
            #expect(a.delegateCalls.withLock { $0.most } == 1, "the delegate was called while another call ran")

            try await b.engine.fetchChanges()
            #expect(b.names.count == count)
            #expect(b.fetchedRecordNames.withLock { $0 }.count == count, "each record arrives once")
        }
    }
}
