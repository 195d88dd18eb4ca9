import Foundation
import SyncCore
import SyncTesting
import Synchronization
import Testing

@testable import SyncKit

@Suite("SyncEngine: sign-in while running, and cancellation")
struct EngineLifecycleTests {
    @Test("an engine created signed out syncs by itself once credentials appear, and wipes on sign-out")
    func credentialsAppearLater() async throws {
        try await withDevices(1, transport: .loopback) { server, account, devices in
            let observer = devices[0]
            let store = CredentialStore()
            let a = TestDevice(
                name: "late", server: server, client: account, automaticallySync: true, credentials: .store(store))
            a.save(id: "x", name: "Written before signing in")
            // Even asked to, a signed-out engine sends nothing; the call also waits out any send the
            // scheduler started (one operation at a time).
            try await a.engine.sendChanges()
            #expect(!a.eventLog.withLock { $0 }.contains("accountChange"))
            try await observer.engine.fetchChanges()
            #expect(observer.names.isEmpty, "nothing is sent without an account")
            // Nor did the scheduler's start or the send it was asked for reach a server: neither counts as a
            // success, which a status display would show as a sync.
            let scheduler = try #require(a.engine.scheduler)
            try await waitUntil("the scheduler ran its start and the send, and waits for its poll") {
                if case .waiting(.fetch, _, .poll) = await scheduler.status.decision { true } else { false }
            } observed: {
                "\(await scheduler.status)"
            }
            let status = await scheduler.status
            #expect(status.lastSuccess == nil, "\(status)")

            store.token = account.token
            try await waitUntil("the engine signs in and sends by itself") {
                a.eventLog.withLock { $0 }.contains("accountChange")
                    && a.engine.state.pendingRecordZoneChanges.isEmpty
            } observed: {
                "events \(a.eventLog.withLock { $0 }); pending \(a.engine.state.pendingRecordZoneChanges)"
            }
            try await observer.engine.fetchChanges()
            #expect(observer.names == ["Written before signing in"])

            store.token = nil
            try await waitUntil("the engine sees the sign-out") {
                a.eventLog.withLock { $0 }.filter { $0 == "accountChange" }.count == 2
            } observed: {
                "events \(a.eventLog.withLock { $0 })"
            }
            #expect(a.names.isEmpty, "signing out wipes the device's data")
            await a.engine.cancelOperations()
        }
    }

    @Test("changes queued before the engine's first account check are sent once it has an account")
    func changesBeforeFirstAccountCheck() async throws {
        try await withDevices(1) { server, account, devices in
            let observer = devices[0]
            // A delegate that queues nothing on sign-in: what it queued at start must survive.
            let a = TestDevice(name: "fresh", server: server, client: account, queuesEverythingOnSignIn: false)
            a.engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: TestDevice.zoneID))])
            a.save(id: "x", name: "Queued at start")
            try await a.engine.sendChanges()
            #expect(a.eventLog.withLock { $0 }.contains("accountChange"), "the first check is a sign-in")
            #expect(a.engine.state.pendingRecordZoneChanges.isEmpty)
            try await observer.engine.fetchChanges()
            #expect(observer.names == ["Queued at start"])
        }
    }

    @Test("changes queued while the first account check is on the wire are kept and sent")
    func changesDuringFirstAccountCheck() async throws {
        try await withDevices(1) { server, account, devices in
            let observer = devices[0]
            let a = TestDevice(name: "fresh", server: server, client: account, queuesEverythingOnSignIn: false)
            a.engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: TestDevice.zoneID))])
            let gate = server.faults.closeGate(pathPrefix: "/v1/account")
            let send = Task { try await a.engine.sendChanges() }
            try await gate.waitUntilHeld()
            a.save(id: "y", name: "Queued during the check")
            gate.open()
            try await send.value
            #expect(a.engine.state.pendingRecordZoneChanges.isEmpty)
            try await observer.engine.fetchChanges()
            #expect(observer.names == ["Queued during the check"])
        }
    }

    @Test("switching accounts still drops what the previous account had queued")
    func switchDropsQueued() async throws {
        try await withDevices(0) { server, account, _ in
            let a = TestDevice(name: "a", server: server, client: account, queuesEverythingOnSignIn: false)
            a.engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: TestDevice.zoneID))])
            a.save(id: "x", name: "Ada's")
            try await a.engine.sendChanges()
            a.save(id: "y", name: "Ada's unsent")
            let state = a.engine.state.serialization
            #expect(state.pendingRecordZoneChanges.count == 1)
            let bob = try await TestClient(baseURL: server.baseURL).signedUp(username: "bob")
            let asBob = TestDevice(
                name: "a", server: server, client: bob, state: state, queuesEverythingOnSignIn: false)
            try await asBob.engine.sendChanges()
            #expect(asBob.engine.state.pendingRecordZoneChanges.isEmpty)
            let bobsZones = try await bob.listZones()
            #expect(bobsZones.isEmpty, "nothing of Ada's reaches Bob's database: \(bobsZones)")
        }
    }

    @Test("a new session token for the same account is not an account change")
    func newTokenSameAccount() async throws {
        try await withDevices(0) { server, account, _ in
            let store = CredentialStore(token: account.token)
            let a = TestDevice(name: "a", server: server, client: account, credentials: .store(store))
            a.save(id: "x", name: "Ada")
            try await a.engine.sendChanges()
            let again = try await TestClient(baseURL: server.baseURL).signedIn(username: "ada")
            store.token = again.token
            a.save(id: "y", name: "Grace")
            try await a.engine.sendChanges()
            #expect(a.eventLog.withLock { $0 }.filter { $0 == "accountChange" }.count == 1)
            #expect(a.names == ["Ada", "Grace"])
        }
    }

    @Test("cancelOperations interrupts a send in flight and one waiting behind it")
    func cancelInterruptsInFlight() async throws {
        try await withDevices(1) { server, _, devices in
            let a = devices[0]
            a.save(id: "x", name: "Slow")
            try await a.engine.sendChanges()
            a.save(id: "x", name: "Slower")
            let gate = server.faults.closeGate(pathPrefix: "/v1/databases/private/records")
            let first = Task { try await a.engine.sendChanges() }
            try await gate.waitUntilHeld()
            let second = Task { try await a.engine.fetchChanges() }
            try await waitUntil("the fetch waits behind the send") { await a.engine.operations.waitingCount == 1 }
            await a.engine.cancelOperations()
            for task in [first, second] {
                let error = await #expect(throws: SyncError.self) { try await task.value }
                #expect(error?.code == .operationCancelled)
            }
            // The held save may still reach the server, as with CKSyncEngine; the change stays pending.
            gate.open()
            #expect(a.engine.state.pendingRecordZoneChanges == [.saveRecord(TestDevice.recordID("x"))])
        }
    }
}

@Suite("SyncEngine: automatic sync through the scheduler")
struct AutomaticSyncTests {
    @Test("two devices with automatic sync converge with no manual call, edits made on both")
    func twoDevicesConverge() async throws {
        try await withDevices(0, transport: .loopback) { server, account, _ in
            let a = TestDevice(name: "a", server: server, client: account, automaticallySync: true)
            let b = TestDevice(name: "b", server: server, client: account, automaticallySync: true)
            for index in 0..<20 { a.save(id: "a\(index)", name: "From A \(index)") }
            for index in 0..<20 { b.save(id: "b\(index)", name: "From B \(index)") }
            try await waitUntil("both devices have all 40 contacts") {
                a.names.count == 40 && b.names.count == 40
            } observed: {
                "A has \(a.names.count), B has \(b.names.count)"
            }
            #expect(a.names == b.names)
            #expect(a.names.count == 40)
            a.save(id: "b3", name: "Renamed on A")
            // By push, or at worst by the poll that runs while a push socket is down.
            try await waitUntil("B has A's rename", timeout: .seconds(120)) {
                b.names.contains("Renamed on A")
            } observed: {
                "B has \(b.names.filter { $0.hasPrefix("Renamed") || $0.hasPrefix("From B 3") })"
            }
            #expect(a.names == b.names)
            let status = await a.engine.scheduler?.status
            #expect(status?.lastSuccess != nil)
            await a.engine.cancelOperations()
            await b.engine.cancelOperations()
        }
    }
}

@Suite("SyncEngine.State: serializations")
struct StateSerializationTests {
    private let zone = RecordZone.ID(zoneName: "Contacts")

    @Test("a state serializes its pending changes, unless the app keeps them itself")
    func pendingChangesInSerializations() {
        let changes: [SyncEngine.PendingRecordZoneChange] = (0..<100).map {
            .saveRecord(Record.ID(recordName: "r\($0)", zoneID: zone))
        }
        let kept = SyncEngine.State(nil)
        kept.add(pendingRecordZoneChanges: changes)
        kept.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: zone))])
        #expect(kept.serialization.pendingRecordZoneChanges == changes)
        #expect(kept.serialization.pendingDatabaseChanges.count == 1)

        let left = SyncEngine.State(nil, serializesPendingChanges: false)
        left.add(pendingRecordZoneChanges: changes)
        left.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: zone))])
        let serialization = left.serialization
        #expect(serialization.pendingRecordZoneChanges.isEmpty)
        #expect(serialization.pendingDatabaseChanges.isEmpty)
        // The engine still has them, and removing some while a serialization is held leaves it as it was.
        left.remove(pendingRecordZoneChanges: Array(changes.prefix(60)))
        #expect(left.pendingRecordZoneChanges == Array(changes.dropFirst(60)))
        #expect(serialization.pendingRecordZoneChanges.isEmpty)
    }
}

@Suite("SyncEngine: who is signed in")
struct AccountCheckTests {
    @Test("a relaunch with the token it checked before does not ask who is signed in; a new token is checked once")
    func checkedTokenIsRemembered() async throws {
        try await withDevices(1) { server, account, devices in
            let a = devices[0]
            a.save(id: "x", name: "Sent")
            try await a.engine.sendChanges()
            #expect(server.faults.requestCount("GET /v1/account") == 1)
            let saved = try #require(a.savedState.withLock { $0 })

            let relaunched = TestDevice(name: "device-0", server: server, client: account, state: saved)
            try await relaunched.engine.fetchChanges()
            #expect(server.faults.requestCount("GET /v1/account") == 1, "the same token: nothing to ask")

            // Signed in again on this device: a new session token, the same user.
            let again = try await TestClient(baseURL: server.baseURL).signedIn(username: "ada")
            let signedInAgain = TestDevice(name: "device-0", server: server, client: again, state: saved)
            try await signedInAgain.engine.fetchChanges()
            try await signedInAgain.engine.fetchChanges()
            #expect(server.faults.requestCount("GET /v1/account") == 2, "a new token is checked, once")
            #expect(!signedInAgain.eventLog.withLock { $0 }.contains("accountChange"), "the same user: no change")

            // Another user's token with this state: an account switch, as before.
            let grace = try await TestClient(baseURL: server.baseURL).signedUp(username: "grace")
            let switched = TestDevice(name: "device-0", server: server, client: grace, state: saved)
            try await switched.engine.fetchChanges()
            #expect(switched.eventLog.withLock { $0 }.contains("accountChange"))
            #expect(switched.names.isEmpty)
        }
    }
}
