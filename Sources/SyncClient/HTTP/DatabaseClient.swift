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

    /// Sends a request to `endpoint` (its `scope` this database's, its other parameters `parameters`) and
    /// returns the answer's body, or throws the server's error.
    package func send(
        _ endpoint: Endpoint, _ parameters: [String: String] = [:], body: [UInt8]?, headers: [(String, String)] = [],
        timeout: TimeAmount = .seconds(60)
    ) async throws -> Data {
        try await send(
            HTTPMethod(endpoint.method),
            endpoint.path(parameters.merging(["scope": database.scope.rawValue]) { own, _ in own }),
            body: body, headers: headers, timeout: timeout)
    }

    /// Sends a request to `path` (one an endpoint's, with a query) and returns the answer's body, or throws
    /// the server's error.
    package func send(
        _ method: HTTPMethod, _ path: String, body: [UInt8]?, headers: [(String, String)] = [],
        timeout: TimeAmount = .seconds(60)
    ) async throws -> Data {
        let connection = ServerConnection(
            serverURL: database.serverURL, token: try await database.credentials.token(),
            deviceID: database.deviceID)
        return try await connection.send(method, path, body: body, headers: headers, timeout: timeout)
    }

    /// Posts `body` as JSON to `endpoint` and decodes the answer.
    package func post<Response: Decodable>(_ endpoint: Endpoint, _ body: some Encodable) async throws -> Response {
        try decode(Response.self, try await send(endpoint, body: Array(try JSONEncoder().encode(body))))
    }

    package func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        try ServerConnection.decode(type, data)
    }

    package func account() async throws -> AccountInfo {
        try decode(AccountInfo.self, try await send(.account, body: nil))
    }

    package func limits() async throws -> ServerLimits {
        try decode(ServerLimits.self, try await send(.limits, body: nil))
    }

    package func modifyZones(_ request: ModifyZonesRequest) async throws -> ModifyZonesResponse {
        try await post(.modifyZones, request)
    }

    /// Saves and deletes records; `writerID`, when given, names who wrote them, so that a fetch
    /// with `excludingWriter` leaves them out.
    package func modifyRecords(_ request: ModifyRecordsRequest, writerID: String? = nil) async throws
        -> ModifyRecordsResponse
    {
        var writer = JSONWriter(capacity: 300 * (request.saves.count + request.deletes.count + 1))
        writer.modifyRecordsRequest(request)
        let body = try await send(
            .modifyRecords, body: writer.bytes, headers: writerID.map { [("X-Writer-ID", $0)] } ?? [])
        return try decode(ModifyRecordsResponse.self, body)
    }

    package func fetchDatabaseChanges(_ request: FetchDatabaseChangesRequest) async throws
        -> FetchDatabaseChangesResponse
    {
        try await post(.fetchDatabaseChanges, request)
    }

    package func fetchZoneChanges(_ request: FetchZoneChangesRequest) async throws -> FetchZoneChangesResponse {
        try await post(.fetchZoneChanges, request)
    }

    package func listZones() async throws -> ListZonesResponse {
        try await post(.listZones, EmptyRequest())
    }

    package func lookupRecords(_ request: LookupRecordsRequest) async throws -> LookupRecordsResponse {
        try await post(.lookupRecords, request)
    }

    // MARK: Account encryption settings

    /// The account's encryption settings, or `nil` when it has none yet.
    package func encryptionSettings() async throws -> AccountEncryptionSettings? {
        do {
            return try decode(AccountEncryptionSettings.self, try await send(.encryptionSettings, body: nil))
        } catch let error as SyncError where error.code == .unknownItem {
            return nil
        }
    }

    /// Stores the account's encryption settings; throws (with the stored ones) when it has some.
    package func createEncryptionSettings(_ settings: AccountEncryptionSettings) async throws {
        _ = try await send(.createEncryptionSettings, body: Array(try JSONEncoder().encode(settings)))
    }

    /// Publishes the account's key pair. Answers the key pair the account has now: this one, or
    /// the one another device published first (which this device adopts; the server keeps the
    /// first). Throws `unknownItem` when the account has no encryption settings yet.
    package func createKeyPair(_ keyPair: AccountKeyPair) async throws -> AccountKeyPair {
        do {
            return try decode(
                AccountKeyPair.self,
                try await send(.createKeyPair, body: Array(try JSONEncoder().encode(keyPair))))
        } catch let error as SyncError where error.code == .serverRecordChanged {
            guard let stored = error.serverEncryptionSettings?.keyPair else { throw error }
            return stored
        }
    }

    /// Changes the passphrase: the new settings and every key wrapped again, at once. Answers the
    /// settings now stored.
    package func changeEncryption(_ request: EncryptionChangeRequest) async throws -> AccountEncryptionSettings {
        try await post(.changeEncryption, request)
    }

    /// Stores a new recovery key for the account.
    package func setUpRecovery(_ request: RecoveryKeyRequest) async throws -> AccountEncryptionSettings {
        try decode(
            AccountEncryptionSettings.self,
            try await send(.setUpRecovery, body: Array(try JSONEncoder().encode(request))))
    }

    /// The account key sealed to the recovery key whose verifier the request shows.
    package func openRecovery(_ request: RecoveryOpenRequest) async throws -> RecoveryOpenResponse {
        try await post(.openRecovery, request)
    }

    /// Deletes the account's encryption settings and every zone with encrypted values.
    package func resetEncryption() async throws {
        _ = try await send(.resetEncryption, body: Array("{}".utf8))
    }
}

/// A request with no members, for operations that take none.
private struct EmptyRequest: Encodable {}

extension HTTPMethod {
    /// The method of an ``Endpoint``.
    init(_ method: Endpoint.Method) {
        self.init(rawValue: method.rawValue)
    }
}
