import Foundation
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// Runs `body` against a fresh server, and stops the server afterwards. The server answers through
/// its router in this process unless the test asks for a loopback listener (`transport: .loopback`),
/// which tests of the HTTP defences, push sockets and raw requests need.
func withServer<T>(
    configuration: SyncServerConfiguration = .testing, transport: TestServer.Transport = .inProcess,
    _ body: (TestServer, TestClient) async throws -> T
) async throws -> T {
    try await TestServer.with(configuration: configuration, transport: transport) { server in
        try await body(server, TestClient(baseURL: server.baseURL))
    }
}

/// The sync error `body` throws, or nil if it throws none (or another kind).
func syncError(_ body: () async throws -> Void) async -> SyncError? {
    do {
        try await body()
        return nil
    } catch let error as SyncError {
        return error
    } catch {
        Issue.record("expected a SyncError, got \(error)")
        return nil
    }
}

let contactsZone = RecordZone.ID(zoneName: "Contacts")

/// A new contact record in the Contacts zone.
func contact(_ name: String, id: String? = nil, zone: RecordZone.ID = contactsZone, email: String? = nil) -> RecordValue
{
    var record = RecordValue(recordType: "Contact", recordID: RecordValue.ID(recordName: id ?? name, zoneID: zone))
    record["name"] = .string(name)
    if let email { record["email"] = .string(email) }
    return record
}

extension TestClient {
    /// Saves records (default policy) and requires every save to succeed.
    @discardableResult
    func save(_ records: [RecordValue], policy: SavePolicy = .ifServerRecordUnchanged) async throws -> [RecordValue] {
        let response = try await modifyRecords(ModifyRecordsRequest(saves: records, savePolicy: policy))
        #expect(response.failedRecordSaves.isEmpty, "\(response.failedRecordSaves)")
        return response.savedRecords
    }

    /// Everything in a zone now, by record name.
    func contents(of zone: RecordZone.ID = contactsZone) async throws -> [String: RecordValue] {
        let all = try await fetchAllZoneChanges(zone)
        return Dictionary(uniqueKeysWithValues: all.modifications.map { ($0.recordID.recordName, $0) })
    }
}

extension Data {
    init(json: String) { self.init(json.utf8) }
}
