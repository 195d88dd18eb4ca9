import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SyncCore

/// Speaks the server's HTTP API for one ``Database``. Every failure surfaces as a ``SyncError``:
/// the server's own, or `networkFailure` when no answer came.
struct DatabaseClient: Sendable {
    let database: Database

    /// One client for the process, like `HTTPClient.shared`, but failing at once when the server
    /// refuses connections: the engine and its scheduler retry with their own backoff, and an app
    /// should show "offline" now, not after the request's whole deadline.
    private static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(5)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    private func path(_ operation: String) -> String {
        "/v1/databases/\(database.scope.rawValue)/\(operation)"
    }

    /// Sends a request and returns the answer's body, or throws the server's error.
    func send(_ method: HTTPMethod, _ path: String, body: [UInt8]?, timeout: TimeAmount = .seconds(60)) async throws
        -> Data
    {
        var url = database.serverURL.absoluteString
        while url.hasSuffix("/") { url.removeLast() }
        var request = HTTPClientRequest(url: url + path)
        request.method = method
        if let token = database.credentials.currentToken {
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
        }
        if let deviceID = database.deviceID { request.headers.add(name: "X-Device-ID", value: deviceID) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let status: Int
        let data: Data
        var retryAfterHeader: Double?
        do {
            let response = try await Self.http.execute(request, timeout: timeout)
            status = Int(response.status.code)
            // A wait no client could honour ("inf", "1e308") is ignored, not slept on.
            retryAfterHeader = response.headers.first(name: "Retry-After").flatMap(Double.init).flatMap {
                SyncError.isValid(retryAfter: $0) ? $0 : nil
            }
            let buffer = try await response.body.collect(upTo: 256 * 1024 * 1024)
            data = Data(buffer.readableBytesView)
        } catch is CancellationError {
            throw SyncError(.operationCancelled, "the request was cancelled")
        } catch {
            throw SyncError(
                .networkFailure,
                "could not reach the sync server at \(url): \(error); the engine retries by itself")
        }
        guard (200..<300).contains(status) else {
            if var error = try? JSONDecoder().decode(SyncError.self, from: data) {
                if error.retryAfter == nil { error.retryAfter = retryAfterHeader }
                throw error
            }
            let code: SyncError.Code =
                switch status {
                case 401: .notAuthenticated
                case 429: .requestRateLimited
                case 502, 503, 504: .serviceUnavailable
                default: .internalError
                }
            throw SyncError(
                code, "the server answered HTTP \(status) without an error body", retryAfter: retryAfterHeader)
        }
        return data
    }

    private func call<Response: Decodable>(_ operation: String, _ body: some Encodable) async throws -> Response {
        let data = try await send(.POST, path(operation), body: Array(try JSONEncoder().encode(body)))
        return try decode(Response.self, data)
    }

    func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        do {
            return try JSONReader.decode(type, from: data)
        } catch {
            throw SyncError(.internalError, "the server's answer could not be read: \(error)")
        }
    }

    func account() async throws -> AccountInfo {
        try decode(AccountInfo.self, try await send(.GET, "/v1/account", body: nil))
    }

    func limits() async throws -> ServerLimits {
        try decode(ServerLimits.self, try await send(.GET, "/v1/limits", body: nil))
    }

    func modifyZones(_ request: ModifyZonesRequest) async throws -> ModifyZonesResponse {
        try await call("zones/modify", request)
    }

    func modifyRecords(_ request: ModifyRecordsRequest) async throws -> ModifyRecordsResponse {
        var writer = JSONWriter(capacity: 300 * (request.saves.count + request.deletes.count + 1))
        writer.modifyRecordsRequest(request)
        return try decode(ModifyRecordsResponse.self, try await send(.POST, path("records/modify"), body: writer.bytes))
    }

    func fetchDatabaseChanges(_ request: FetchDatabaseChangesRequest) async throws -> FetchDatabaseChangesResponse {
        try await call("zones/changes", request)
    }

    func fetchZoneChanges(_ request: FetchZoneChangesRequest) async throws -> FetchZoneChangesResponse {
        try await call("records/changes", request)
    }
}
