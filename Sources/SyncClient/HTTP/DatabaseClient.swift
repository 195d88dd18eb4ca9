import Foundation
import NIOCore
import NIOHTTP1
import SyncCore

/// Speaks the server's HTTP API for one ``Database``. Every failure surfaces as a ``SyncError``:
/// the server's own, or `networkFailure` when no answer came.
package struct DatabaseClient: Sendable {
    package let database: Database

    package init(database: Database) {
        self.database = database
    }

    private func path(_ operation: String) -> String {
        "/v1/databases/\(database.scope.rawValue)/\(operation)"
    }

    /// Sends a request and returns the answer's body, or throws the server's error.
    package func send(
        _ method: HTTPMethod, _ path: String, body: [UInt8]?, headers: [(String, String)] = [],
        timeout: TimeAmount = .seconds(60)
    ) async throws -> Data {
        let connection = ServerConnection(
            serverURL: database.serverURL, token: try await database.credentials.token(),
            deviceID: database.deviceID)
        return try await connection.send(method, path, body: body, headers: headers, timeout: timeout)
    }

    private func call<Response: Decodable>(_ operation: String, _ body: some Encodable) async throws -> Response {
        try await post(path(operation), body)
    }

    /// Posts `body` as JSON to `path` and decodes the answer.
    package func post<Response: Decodable>(_ path: String, _ body: some Encodable) async throws -> Response {
        try decode(Response.self, try await send(.POST, path, body: Array(try JSONEncoder().encode(body))))
    }

    package func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        try ServerConnection.decode(type, data)
    }

    package func account() async throws -> AccountInfo {
        try decode(AccountInfo.self, try await send(.GET, "/v1/account", body: nil))
    }

    package func limits() async throws -> ServerLimits {
        try decode(ServerLimits.self, try await send(.GET, "/v1/limits", body: nil))
    }

    package func modifyZones(_ request: ModifyZonesRequest) async throws -> ModifyZonesResponse {
        try await call("zones/modify", request)
    }

    /// Saves and deletes records; `writerID`, when given, names who wrote them, so that a fetch
    /// with `excludingWriter` leaves them out.
    package func modifyRecords(_ request: ModifyRecordsRequest, writerID: String? = nil) async throws
        -> ModifyRecordsResponse
    {
        var writer = JSONWriter(capacity: 300 * (request.saves.count + request.deletes.count + 1))
        writer.modifyRecordsRequest(request)
        let body = try await send(
            .POST, path("records/modify"), body: writer.bytes, headers: writerID.map { [("X-Writer-ID", $0)] } ?? [])
        return try decode(ModifyRecordsResponse.self, body)
    }

    package func fetchDatabaseChanges(_ request: FetchDatabaseChangesRequest) async throws
        -> FetchDatabaseChangesResponse
    {
        try await call("zones/changes", request)
    }

    package func fetchZoneChanges(_ request: FetchZoneChangesRequest) async throws -> FetchZoneChangesResponse {
        try await call("records/changes", request)
    }

    package func listZones() async throws -> ListZonesResponse {
        try await call("zones/list", EmptyRequest())
    }

    package func lookupRecords(_ request: LookupRecordsRequest) async throws -> LookupRecordsResponse {
        try await call("records/lookup", request)
    }

    // MARK: Account encryption settings

    /// The account's encryption settings, or `nil` when it has none yet.
    package func encryptionSettings() async throws -> AccountEncryptionSettings? {
        do {
            return try decode(AccountEncryptionSettings.self, try await send(.GET, "/v1/account/encryption", body: nil))
        } catch let error as SyncError where error.code == .unknownItem {
            return nil
        }
    }

    /// Stores the account's encryption settings; throws (with the stored ones) when it has some.
    package func createEncryptionSettings(_ settings: AccountEncryptionSettings) async throws {
        _ = try await send(.PUT, "/v1/account/encryption", body: Array(try JSONEncoder().encode(settings)))
    }

    /// Publishes the account's key pair. Answers the key pair the account has now: this one, or
    /// the one another device published first (which this device adopts; the server keeps the
    /// first). Throws `unknownItem` when the account has no encryption settings yet.
    package func createKeyPair(_ keyPair: AccountKeyPair) async throws -> AccountKeyPair {
        do {
            return try decode(
                AccountKeyPair.self,
                try await send(.PUT, "/v1/account/encryption/key-pair", body: Array(try JSONEncoder().encode(keyPair))))
        } catch let error as SyncError where error.code == .serverRecordChanged {
            guard let stored = error.serverEncryptionSettings?.keyPair else { throw error }
            return stored
        }
    }

    /// Changes the passphrase: the new settings and every key wrapped again, at once. Answers the
    /// settings now stored.
    package func changeEncryption(_ request: EncryptionChangeRequest) async throws -> AccountEncryptionSettings {
        try await post("/v1/account/encryption/change", request)
    }

    /// Deletes the account's encryption settings and every zone with encrypted values.
    package func resetEncryption() async throws {
        _ = try await send(.POST, "/v1/account/encryption/reset", body: Array("{}".utf8))
    }
}

/// A request with no members, for operations that take none.
private struct EmptyRequest: Encodable {}
