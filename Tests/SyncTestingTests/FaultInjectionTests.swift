import Foundation
import SyncCore
import SyncServer
import SyncTesting
import Testing

@Suite("Fault injection for device simulations")
struct FaultInjectionTests {
    private let zone = RecordZone.ID(zoneName: "Contacts")

    private func record(_ name: String) -> RecordValue {
        var record = RecordValue(recordType: "Contact", recordID: RecordValue.ID(recordName: name, zoneID: zone))
        record["name"] = .string(name)
        return record
    }

    @Test("a 30 % mixed plan fails about 30 % of database requests, with every kind of fault")
    func mixedPlanRates() async throws {
        let server = try await TestServer.start()
        let ada = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
        server.faults.plan = .mixed(failureRate: 0.3)
        var failures = 0
        for _ in 0..<400 {
            do {
                _ = try await ada.listZones()
            } catch {
                failures += 1
            }
        }
        let counts = server.faults.counts
        #expect(counts.requests == 400)
        #expect(counts.failures == failures)
        #expect((80...160).contains(failures), "\(failures) of 400 failed")
        #expect(counts.serviceUnavailable > 0 && counts.rateLimited > 0)
        #expect(counts.droppedRequests > 0 && counts.droppedResponses > 0)
        // Account routes are outside the default path prefix and never fail.
        #expect(try await ada.account().username == "ada")
        try await server.stop()
    }

    @Test("503 and 429 faults carry retryAfter; a dropped request applies nothing")
    func answeredFaults() async throws {
        let server = try await TestServer.start()
        let ada = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
        try await ada.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: zone)]))

        server.faults.plan = FaultPlan(serviceUnavailable: 1, retryAfter: 2.5)
        let unavailable = try await ada.send(.post, "/v1/databases/private/zones/list")
        #expect(unavailable.status == 503)
        #expect(unavailable.error?.code == .serviceUnavailable)
        #expect(unavailable.error?.retryAfter == 2.5)
        #expect(unavailable.header("Retry-After") == "3")

        server.faults.plan = FaultPlan(rateLimited: 1)
        #expect(try await ada.send(.post, "/v1/databases/private/zones/list").status == 429)

        // Work stopped inside the server (as a closed database pool stops it) is a 503 to retry, not a 500.
        server.faults.plan = FaultPlan(cancelInside: 1)
        let cancelled = try await ada.send(.post, "/v1/databases/private/zones/list")
        #expect(cancelled.status == 503 && cancelled.error?.code == .serviceUnavailable, "\(cancelled.status)")
        #expect(cancelled.error?.retryAfter == 1)
        #expect(server.faults.counts.cancelledInside == 1)

        server.faults.plan = FaultPlan(dropRequest: 1)
        await #expect(throws: (any Error).self) {
            _ = try await ada.modifyRecords(ModifyRecordsRequest(saves: [record("Lost")]))
        }
        server.faults.plan = .none
        #expect(try await ada.lookupRecords([record("Lost").recordID]).records.isEmpty)
        try await server.stop()
    }

    @Test("a dropped response applied the change; replaying its request ID is harmless")
    func droppedResponseThenReplay() async throws {
        let server = try await TestServer.start()
        let ada = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
        try await ada.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: zone)]))
        let request = ModifyRecordsRequest(saves: [record("Grace")], clientRequestID: "retry-me")

        server.faults.plan = FaultPlan(dropResponse: 1)
        await #expect(throws: (any Error).self) { _ = try await ada.modifyRecords(request) }
        server.faults.plan = .none
        let replay = try await ada.modifyRecords(request)
        #expect(replay.savedRecords.map(\.recordID.recordName) == ["Grace"])
        #expect(replay.failedRecordSaves.isEmpty, "the replay must not conflict with its own first attempt")
        let all = try await ada.fetchAllZoneChanges(zone)
        #expect(all.modifications.count == 1)
        try await server.stop()
    }

    @Test("a gate holds matching requests until the test opens it; other requests pass meanwhile")
    func gateHoldsUntilOpened() async throws {
        let server = try await TestServer.start()
        let ada = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
        try await ada.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: zone)]))
        let gate = server.faults.closeGate(pathPrefix: "/v1/databases/private/records/modify")
        let saving = Task { try await ada.modifyRecords(ModifyRecordsRequest(saves: [record("Held")])) }
        try await gate.waitUntilHeld()
        #expect(gate.arrivals == ["POST /v1/databases/private/records/modify"])

        // Held before it was handled: nothing is saved yet, and other requests are answered.
        #expect(try await ada.lookupRecords([record("Held").recordID]).records.isEmpty)
        #expect(try await ada.listZones().map(\.zoneID) == [zone])
        #expect(gate.heldCount == 1)

        gate.open()
        let saved = try await saving.value
        #expect(saved.savedRecords.map(\.recordID.recordName) == ["Held"])
        #expect(gate.heldCount == 0)
        // An open gate holds nothing more.
        _ = try await ada.modifyRecords(ModifyRecordsRequest(saves: [record("After")]))
        #expect(gate.arrivals.count == 1)
        try await server.stop()
    }

    @Test("a gate for one method lets the others through")
    func gateMatchesMethod() async throws {
        let server = try await TestServer.start()
        let ada = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
        let gate = server.faults.closeGate(pathPrefix: "/v1/databases", method: .get)
        #expect(try await ada.listZones().isEmpty, "a POST passes a GET gate")
        #expect(gate.arrivals.isEmpty)
        try await server.stop()
    }

    @Test("stopping the server lets held requests go on, so a forgotten gate cannot hang a test")
    func stopOpensGates() async throws {
        let server = try await TestServer.start()
        let ada = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
        let gate = server.faults.closeGate(pathPrefix: "/v1/databases")
        let listing = Task { try await ada.listZones() }
        try await gate.waitUntilHeld()
        try await server.stop()
        #expect(gate.isOpen)
        // Answered or cut off by the shutdown; either way the call returns.
        _ = try? await listing.value
    }

    @Test("waitUntilHeld gives up with what it saw when no request comes")
    func waitUntilHeldReports() async throws {
        let server = try await TestServer.start()
        let gate = server.faults.closeGate(pathPrefix: "/v1/databases/private/records/modify")
        let error = await #expect(throws: WaitTimeout.self) {
            try await gate.waitUntilHeld(timeout: .milliseconds(50))
        }
        #expect(error?.description.contains("0 held; arrived: none") == true, "\(String(describing: error))")
        try await server.stop()
    }
}
