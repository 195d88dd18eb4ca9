import Foundation
import SyncCore
import SyncServer
import SyncTesting
import Testing

@testable import SyncClient

#if canImport(Glibc)
    import Glibc
#endif

/// The client side of a server on a Unix socket, as the contacts app's local server is reached: requests,
/// sign-in and the push socket all go through `http+unix://`, and nothing goes once the directory is unsafe.
@Suite("SyncClient over a Unix socket: requests and the push socket", .timeLimit(.minutes(2)))
struct UnixSocketClientTests {
    @Test("sign up, a record saved and fetched, and a push heard, all over the socket")
    func requestsAndPush() async throws {
        let directory = TemporaryFiles.path("unix")
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/sync.sock"
        var runner = SyncServerRunner(storagePath: directory + "/server.sqlite")
        runner.unixSocketPath = socket
        runner.listensOnTCP = false
        runner.configuration = .testing
        let (listening, listened) = AsyncStream.makeStream(of: Void.self)
        runner.onSocketListening = { _ in listened.yield() }
        let server = Task { try await runner.run() }
        defer { server.cancel() }
        var iterator = listening.makeAsyncIterator()
        await iterator.next()

        let url = ServerEndpoint.url(unixSocketPath: socket)
        let accounts = AccountClient(serverURL: url)
        #expect(try await accounts.health(timeout: .seconds(60)).status == "ok")
        let session = try await accounts.signUp(username: "ada", password: "correct horse")
        #expect(try await accounts.account(token: session.token).username == "ada")

        let (heard, hear) = AsyncStream.makeStream(of: PushMessage.self)
        let listener = Task {
            try await PushSocket.listen(serverURL: url, token: session.token, deviceID: UUID().uuidString) {
                hear.yield($0)
            }
        }
        defer { listener.cancel() }
        var messages = heard.makeAsyncIterator()
        let first = await messages.next()
        #expect(first?.event == .connected, "the push socket opened over the Unix socket")

        let database = Database(serverURL: url, credentials: .token(session.token), deviceID: "laptop")
        let zone = RecordZone(zoneID: RecordZone.ID(zoneName: "Contacts"))
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        let pushed = await messages.next()
        #expect(pushed?.event == .databaseChanged, "another device's change was pushed: \(String(describing: pushed))")
        _ = try await listener.cancelAndValue()
    }
}

extension Task where Failure == any Error {
    fileprivate func cancelAndValue() async throws -> Success? {
        cancel()
        return try? await value
    }
}
