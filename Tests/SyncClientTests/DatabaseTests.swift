import Foundation
import SyncClient
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// `Database` used the way CloudKit code uses `CKDatabase`, against the real server, through a
/// `Container` configured as a porting app configures it.
@Suite("Database and Container: CKDatabase's and CKContainer's API")
struct DatabaseTests {
    static let zoneID = RecordZone.ID(zoneName: "Contacts")

    /// A container signed up on a fresh server through the environment variables a port sets.
    private func withContainer(_ body: (TestServer, Container) async throws -> Void) async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let configuration = try ContainerConfiguration.load(
                identifier: "iCloud.com.example.Contacts",
                environment: [
                    "SYNCKIT_SERVER": server.baseURL, "SYNCKIT_USERNAME": "ada", "SYNCKIT_PASSWORD": "correct horse",
                    "SYNCKIT_SIGN_UP": "1",
                ])
            try await body(server, Container(identifier: "iCloud.com.example.Contacts", configuration: configuration))
        }
    }

    @Test("every field type comes back == to what was saved, through the real server")
    func everyTypeRoundTrips() async throws {
        try await withContainer { _, container in
            let database = container.privateCloudDatabase
            try await database.save(RecordZone(zoneID: Self.zoneID))
            let record = Record(recordType: "Sample", recordID: Record.ID(recordName: "all", zoneID: Self.zoneID))
            let values: [String: any RecordValueProtocol] = [
                "string": "Łukasz 🧡 \u{0}end", "int": Int64.max, "negative": Int64.min, "double": 0.1 + 0.2,
                "negativeZero": -0.0, "subnormal": Double.leastNonzeroMagnitude, "huge": Double.greatestFiniteMagnitude,
                "now": Date(), "exactDate": Date(timeIntervalSinceReferenceDate: 721_692_800.000_123_4),
                "ancient": Date(timeIntervalSince1970: -62_135_596_800.5), "bytes": Data((0...255).map(UInt8.init)),
                "reference": Record.Reference(recordID: Record.ID(recordName: "other", zoneID: Self.zoneID)),
                "strings": ["a", "", "c"], "dates": [Date(), Date(timeIntervalSinceReferenceDate: 0.000_001)],
                "numbers": [1.5, -2.25],
            ]
            for (key, value) in values { record[key] = value }
            _ = try await database.save(record)
            let fetched = try await database.record(for: record.recordID)
            for (key, value) in values {
                #expect(fetched[key]?.recordFieldValue == value.recordFieldValue, "field \(key)")
            }
            #expect(fetched["now"] as? Date == values["now"] as? Date)
            let negativeZero = try #require(fetched["negativeZero"] as? Double)
            #expect(negativeZero == 0 && negativeZero.sign == .minus)
            #expect(fetched.recordChangeTag != nil)
            #expect(fetched.creationDate != nil)
        }
    }

    @Test("records: save, fetch, conflict with the server's record, delete, and per-item results")
    func recordOperations() async throws {
        try await withContainer { _, container in
            let database = container.privateCloudDatabase
            #expect(try await database.allRecordZones().isEmpty)
            let zone = try await database.save(RecordZone(zoneID: Self.zoneID))
            #expect(zone.zoneID == Self.zoneID)
            #expect(try await database.recordZone(for: Self.zoneID).zoneID == Self.zoneID)
            #expect(try await database.allRecordZones().map(\.zoneID) == [Self.zoneID])

            let id = Record.ID(recordName: "ada", zoneID: Self.zoneID)
            let record = Record(recordType: "Contact", recordID: id)
            record["name"] = "Ada"
            let saved = try await database.save(record)
            #expect(saved["name"] as? String == "Ada")

            // A second save of the never-saved record conflicts: the error carries the server's record.
            let stale = Record(recordType: "Contact", recordID: id)
            stale["name"] = "Stale"
            let conflict = await #expect(throws: SyncError.self) { try await database.save(stale) }
            #expect(conflict?.code == .serverRecordChanged)
            #expect(conflict?.serverRecord?["name"] as? String == "Ada")
            #expect(conflict?.serverRecord?.recordChangeTag == saved.recordChangeTag)

            // Filling the server's record in place and saving it succeeds.
            saved["name"] = "Ada Lovelace"
            #expect(try await database.save(saved)["name"] as? String == "Ada Lovelace")

            let missing = Record.ID(recordName: "nobody", zoneID: Self.zoneID)
            let results = try await database.records(for: [id, missing])
            #expect(try results[id]?.get()["name"] as? String == "Ada Lovelace")
            #expect(throws: SyncError.self) { try results[missing]?.get() }
            let unknown = await #expect(throws: SyncError.self) { try await database.record(for: missing) }
            #expect(unknown?.code == .unknownItem)

            let other = Record(recordType: "Contact", recordID: Record.ID(recordName: "bob", zoneID: Self.zoneID))
            let elsewhere = Record(
                recordType: "Contact",
                recordID: Record.ID(recordName: "eve", zoneID: RecordZone.ID(zoneName: "Nowhere")))
            let (saves, deletes) = try await database.modifyRecords(
                saving: [other, elsewhere], deleting: [id], savePolicy: .ifServerRecordUnchanged, atomically: false)
            #expect((try? saves[other.recordID]?.get()) != nil)
            #expect(throws: SyncError.self) { try saves[elsewhere.recordID]?.get() }
            #expect((try? deletes[id]?.get()) != nil)
            try await database.deleteRecord(withID: other.recordID)
            #expect(try await database.records(for: [id, other.recordID]).values.allSatisfy { (try? $0.get()) == nil })
        }
    }

    @Test("deleting a zone deletes its records; deleting it again, or one never made, is not an error")
    func zoneDeletion() async throws {
        try await withContainer { _, container in
            let database = container.privateCloudDatabase
            try await database.deleteRecordZone(withID: Self.zoneID)
            try await database.save(RecordZone(zoneID: Self.zoneID))
            let record = Record(recordType: "Contact", recordID: Record.ID(recordName: "ada", zoneID: Self.zoneID))
            _ = try await database.save(record)
            try await database.deleteRecordZone(withID: Self.zoneID)
            #expect(try await database.allRecordZones().isEmpty)
            let gone = await #expect(throws: SyncError.self) { try await database.recordZone(for: Self.zoneID) }
            #expect(gone?.code == .zoneNotFound)
            try await database.deleteRecordZone(withID: Self.zoneID)
        }
    }

    @Test("a container reports its account; one with no configuration says what to set")
    func containerAccount() async throws {
        try await withContainer { _, container in
            #expect(try await container.accountStatus() == .available)
            let user = try await container.userRecordID()
            #expect(user.zoneID.zoneName == Record.ID.userZoneName)
            #expect(!user.recordName.isEmpty)
        }
        let error = #expect(throws: SyncError.self) {
            try ContainerConfiguration.load(
                identifier: "iCloud.com.example.Contacts",
                environment: ["SYNCKIT_CONFIG": "/nonexistent/containers.json"])
        }
        #expect(error?.message.contains("SYNCKIT_SERVER") == true)
        let unconfigured = Container(
            identifier: "iCloud.com.example.Unconfigured",
            environment: ["SYNCKIT_CONFIG": "/nonexistent/containers.json"])
        #expect(try await unconfigured.accountStatus() == .noAccount)
        let failure = await #expect(throws: SyncError.self) {
            try await unconfigured.privateCloudDatabase.allRecordZones()
        }
        #expect(failure?.code == .notAuthenticated)
        #expect(failure?.message.contains("SYNCKIT_SERVER") == true)
    }

    @Test("two devices signing up one new account at the same moment both end up signed in to it")
    func simultaneousSignUp() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            // Both find no account, and both ask to create it: held until both have asked.
            let gate = server.faults.closeGate(pathPrefix: "/v1/accounts", method: .post)
            let configuration = ContainerConfiguration(
                serverURL: URL(string: server.baseURL)!, username: "ada", password: "correct horse", signUp: true)
            let laptop = Container(identifier: "iCloud.com.example.Contacts", configuration: configuration)
            let phone = Container(identifier: "iCloud.com.example.Contacts", configuration: configuration)
            async let laptopUser = laptop.userRecordID()
            async let phoneUser = phone.userRecordID()
            try await waitUntil("both sign-ups reach the server") { gate.heldCount == 2 }
            gate.open()
            // One creates the account; the other is told the name is taken, and signs in to it.
            let (first, second) = try await (laptopUser, phoneUser)
            #expect(first == second)
        }
    }

    @Test("a wrong password and a missing account are told apart from a missing configuration")
    func wrongPassword() async throws {
        try await withContainer { server, container in
            _ = try await container.userRecordID()
            let wrong = Container(
                identifier: "iCloud.com.example.Contacts",
                configuration: ContainerConfiguration(
                    serverURL: URL(string: server.baseURL)!, username: "ada", password: "wrong"))
            let error = await #expect(throws: SyncError.self) { try await wrong.userRecordID() }
            #expect(error?.code == .notAuthenticated)
        }
    }
}
