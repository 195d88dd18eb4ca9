import Foundation
import NIOHTTP1
@_exported import SyncClient
import SyncCore
import Synchronization

/// An HTTP method, for ``TestClient/send(_:_:body:token:headers:)``.
public enum RequestMethod: String, Sendable {
    case get = "GET"
    case post = "POST"
    case put = "PUT"
    case delete = "DELETE"
    case patch = "PATCH"
}

/// A minimal client of the sync server's HTTP API, for tests and for simulating devices.
///
/// Typed calls throw the server's ``SyncError`` for any non-2xx answer; ``send(_:_:body:token:headers:)``
/// returns the raw answer for tests that check statuses and bodies themselves.
public struct TestClient: Sendable {
    /// `http://host:port` of the server.
    public var baseURL: String
    /// The bearer token sent with every request, once signed in.
    public var token: String?
    /// Sent as `X-Device-ID` with modifications, and as `device` when opening the push socket.
    public var deviceID: String?

    public init(baseURL: String, token: String? = nil, deviceID: String? = nil) {
        self.baseURL = baseURL
        self.token = token
        self.deviceID = deviceID
    }

    /// Sends a request and returns whatever came back.
    public func send(
        _ method: RequestMethod, _ path: String, body: Data? = nil, token: String? = nil,
        headers: [(String, String)] = []
    ) async throws -> HTTPAnswer {
        guard let url = URL(string: baseURL) else {
            throw SyncError(.invalidArguments, "\(baseURL) is not a URL")
        }
        var connection = ServerConnection(serverURL: url, token: token ?? self.token, deviceID: deviceID)
        connection.maximumAnswerSize = 64 * 1024 * 1024
        return try await connection.exchange(
            HTTPMethod(rawValue: method.rawValue), path, body: body.map(Array.init), headers: headers)
    }

    /// Sends a request to `endpoint`, its parameters filled from `parameters`, and returns whatever came back.
    public func send(
        _ endpoint: Endpoint, _ parameters: [String: String] = [:], body: Data? = nil, token: String? = nil,
        headers: [(String, String)] = []
    ) async throws -> HTTPAnswer {
        try await send(
            RequestMethod(rawValue: endpoint.method.rawValue)!, endpoint.path(parameters), body: body, token: token,
            headers: headers)
    }

    /// Sends a JSON body to `endpoint` and decodes a JSON answer; a non-2xx answer throws its ``SyncError``.
    public func call<Response: Decodable>(
        _ endpoint: Endpoint, parameters: [String: String] = [:], _ body: (any Encodable)? = nil,
        as type: Response.Type = Response.self
    ) async throws -> Response {
        try await send(endpoint, parameters, body: try body.map { try JSONEncoder().encode($0) })
            .decoded(as: Response.self)
    }

    /// Sends a JSON body and decodes a JSON answer; a non-2xx answer throws its ``SyncError``.
    public func call<Response: Decodable>(
        _ method: RequestMethod, _ path: String, _ body: (any Encodable)? = nil, as type: Response.Type = Response.self
    ) async throws -> Response {
        try await send(method, path, body: try body.map { try JSONEncoder().encode($0) }).decoded(as: Response.self)
    }

    // MARK: Accounts

    /// Creates an account and signs in; returns a client carrying the session token.
    public func signedUp(username: String, password: String = "correct horse battery") async throws -> TestClient {
        let credentials = AccountCredentials(username: username, password: password)
        let _: AccountInfo = try await call(.createAccount, credentials)
        return try await signedIn(username: username, password: password)
    }

    /// Signs in; returns a client carrying the session token.
    public func signedIn(username: String, password: String = "correct horse battery") async throws -> TestClient {
        let session: SessionInfo = try await call(
            .signIn, AccountCredentials(username: username, password: password))
        var client = self
        client.token = session.token
        return client
    }

    /// `GET /v1/account`.
    public func account() async throws -> AccountInfo {
        try await call(.account)
    }

    // MARK: Databases

    public func modifyZones(_ request: ModifyZonesRequest, scope: DatabaseScope = .private) async throws
        -> ModifyZonesResponse
    {
        try await call(.modifyZones, parameters: ["scope": scope.rawValue], request)
    }

    /// Saves zones by name.
    @discardableResult
    public func saveZones(_ names: String..., scope: DatabaseScope = .private) async throws -> ModifyZonesResponse {
        try await modifyZones(ModifyZonesRequest(saves: names.map(RecordZone.init(zoneName:))), scope: scope)
    }

    public func listZones(scope: DatabaseScope = .private) async throws -> [RecordZone] {
        let response: ListZonesResponse = try await call(.listZones, parameters: ["scope": scope.rawValue])
        return response.zones
    }

    /// Saves and deletes records; `writerID` is sent as `X-Writer-ID`.
    public func modifyRecords(
        _ request: ModifyRecordsRequest, scope: DatabaseScope = .private, writerID: String? = nil
    ) async throws -> ModifyRecordsResponse {
        var writer = JSONWriter(capacity: 300 * (request.saves.count + request.deletes.count + 1))
        writer.modifyRecordsRequest(request)
        return try await send(
            .modifyRecords, ["scope": scope.rawValue], body: Data(writer.bytes),
            headers: writerID.map { [("X-Writer-ID", $0)] } ?? []
        ).decoded(as: ModifyRecordsResponse.self)
    }

    public func fetchDatabaseChanges(
        since: ServerChangeToken? = nil, resultsLimit: Int? = nil, scope: DatabaseScope = .private
    ) async throws -> FetchDatabaseChangesResponse {
        try await call(
            .fetchDatabaseChanges, parameters: ["scope": scope.rawValue],
            FetchDatabaseChangesRequest(since: since, resultsLimit: resultsLimit))
    }

    public func fetchZoneChanges(
        _ zoneID: RecordZone.ID, since: ServerChangeToken? = nil, resultsLimit: Int? = nil,
        scope: DatabaseScope = .private, excludingWriter: String? = nil
    ) async throws -> FetchZoneChangesResponse {
        try await call(
            .fetchZoneChanges, parameters: ["scope": scope.rawValue],
            FetchZoneChangesRequest(
                zoneID: zoneID, since: since, resultsLimit: resultsLimit, excludingWriter: excludingWriter))
    }

    /// Fetches every page of a zone's changes; returns them and the final token.
    public func fetchAllZoneChanges(
        _ zoneID: RecordZone.ID, since: ServerChangeToken? = nil, resultsLimit: Int? = nil,
        scope: DatabaseScope = .private, excludingWriter: String? = nil
    ) async throws -> (
        modifications: [RecordValue], deletions: [FetchZoneChangesResponse.Deletion], token: ServerChangeToken
    ) {
        var token = since
        var modifications: [RecordValue] = []
        var deletions: [FetchZoneChangesResponse.Deletion] = []
        while true {
            let page = try await fetchZoneChanges(
                zoneID, since: token, resultsLimit: resultsLimit, scope: scope, excludingWriter: excludingWriter)
            modifications += page.modifications
            deletions += page.deletions
            token = page.changeToken
            if !page.moreComing { return (modifications, deletions, page.changeToken) }
        }
    }

    public func lookupRecords(_ recordIDs: [RecordValue.ID], scope: DatabaseScope = .private) async throws
        -> LookupRecordsResponse
    {
        try await call(
            .lookupRecords, parameters: ["scope": scope.rawValue], LookupRecordsRequest(recordIDs: recordIDs))
    }

    // MARK: Shares

    public func lookupUsers(_ usernames: [String]) async throws -> LookupUsersResponse {
        try await call(.lookupUsers, LookupUsersRequest(usernames: usernames))
    }

    /// Shares a zone of this user's, or a record of it and those below it (or changes a share).
    @discardableResult
    public func saveShare(_ request: SaveShareRequest) async throws -> Share {
        try await call(.saveShare, request)
    }

    /// A zone's zone-wide share, or with `shareRecordName` one of its record-hierarchy shares.
    public func fetchShare(_ zoneID: RecordZone.ID, shareRecordName: String? = nil) async throws -> Share {
        try await call(.fetchShare, ShareZoneRequest(zoneID: zoneID, shareRecordName: shareRecordName))
    }

    public func deleteShare(_ zoneID: RecordZone.ID, shareRecordName: String? = nil) async throws {
        _ = try await send(
            .deleteShare,
            body: try JSONEncoder().encode(ShareZoneRequest(zoneID: zoneID, shareRecordName: shareRecordName))
        ).decoded(as: EmptyAnswer.self)
    }

    public func shareMetadata(token: String) async throws -> ShareMetadata {
        try await call(.shareMetadata, ShareTokenRequest(token: token))
    }

    @discardableResult
    public func acceptShare(token: String, encryptionKey: RecordZone.EncryptionKey? = nil) async throws
        -> ShareMetadata
    {
        try await call(.acceptShare, ShareTokenRequest(token: token, encryptionKey: encryptionKey))
    }

    // MARK: Push

    /// Opens the push socket; returns once the server confirmed the subscription.
    public func openPush() async throws -> PushConnection {
        try await PushConnection.open(client: self)
    }
}

/// An answer with nothing to read (`{}`).
private struct EmptyAnswer: Decodable {}

/// An open push socket, collecting what the server sends.
public final class PushConnection: Sendable {
    /// A message and when it arrived.
    public struct Received: Sendable {
        public var message: PushMessage
        public var at: ContinuousClock.Instant
    }

    private let inbox: Mutex<[Received]>
    private let task: Mutex<Task<Void, any Error>?>
    private let closed: Mutex<Bool>
    private let closure: Mutex<(code: UInt16?, reason: String)?>

    private init() {
        inbox = Mutex([])
        task = Mutex(nil)
        closed = Mutex(false)
        closure = Mutex(nil)
    }

    /// Whether the socket has closed: the server closed it, the connection broke, or ``close()``.
    public var isClosed: Bool { closed.withLock { $0 } }

    /// The close code and reason the server sent, once it closed the socket with a close frame.
    public var serverClosure: (code: UInt16?, reason: String)? { closure.withLock { $0 } }

    static func open(client: TestClient) async throws -> PushConnection {
        guard let token = client.token else {
            throw SyncError(.notAuthenticated, "sign in before opening the push socket")
        }
        guard let url = URL(string: client.baseURL) else {
            throw SyncError(.invalidArguments, "\(client.baseURL) is not a URL")
        }
        let connection = PushConnection()
        let (ready, readyContinuation) = AsyncStream.makeStream(of: Bool.self)
        let task = Task {
            defer {
                connection.closed.withLock { $0 = true }
                readyContinuation.finish()
            }
            let closure = try await PushSocket.listen(
                serverURL: url, token: token, deviceID: client.deviceID, maximumMessageSize: 1 << 20
            ) { push in
                if push.event == .connected {
                    readyContinuation.yield(true)
                } else {
                    connection.inbox.withLock { $0.append(Received(message: push, at: .now)) }
                }
            }
            connection.closure.withLock { $0 = closure.map { ($0.code, $0.reason) } }
        }
        connection.task.withLock { $0 = task }
        var iterator = ready.makeAsyncIterator()
        guard await iterator.next() == true else {
            try await task.value
            throw SyncError(.networkFailure, "the push socket closed before the server confirmed it")
        }
        return connection
    }

    /// The oldest message not yet taken, waiting up to `timeout` for one; nil if none came.
    ///
    /// The timeout is generous because it only matters when a message that should come does not.
    /// To check that nothing came, do not wait a short while: send a marker after the action and
    /// check that nothing arrives before it (``messagesBeforeMarker(within:)``).
    public func next(within timeout: Duration = .seconds(60)) async -> Received? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let first = inbox.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return first }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Closes the socket.
    public func close() {
        task.withLock { $0?.cancel() }
    }

    deinit { close() }
}
