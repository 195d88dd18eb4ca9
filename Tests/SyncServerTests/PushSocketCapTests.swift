import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// The cap on push sockets per account: one socket beyond it is refused at its upgrade, saying why,
/// and the cap is the account's alone.
@Suite("Push sockets per account", .onEveryBackend)
struct PushSocketCapTests {
    @Test(
        "a socket beyond the cap is refused at the upgrade with 413 limitExceeded; others' sockets and later ones open")
    func socketBeyondTheCapIsRefused() async throws {
        var configuration = SyncServerConfiguration.testing
        configuration.maximumPushSocketsPerAccount = 3
        try await withServer(configuration: configuration, transport: .loopback) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let adaID = try await ada.account().userRecordName
            let token = try #require(ada.token)
            var sockets = [try await ada.openPush(), try await ada.openPush(), try await ada.openPush()]
            #expect(await server.pushHub.connectionCount(user: adaID) == 3)

            let refused = try await RawHTTP.exchange(
                port: server.port, "GET", "/v1/push",
                headers: HTTPStatusTests.upgradeHeaders + [("Authorization", "Bearer \(token)")])
            #expect(refused.status == 413)
            #expect(refused.error?.code == .limitExceeded)
            #expect(
                refused.error?.message.contains("3 push sockets open") == true, "\(String(describing: refused.error))")
            #expect(await server.pushHub.connectionCount(user: adaID) == 3, "the refused one was never counted")
            // The sockets that were open still hear of changes.
            var other = ada
            other.deviceID = "other"
            try await other.saveZones("Contacts")
            for socket in sockets {
                #expect(await socket.next()?.message == PushMessage(event: .databaseChanged, scope: .private))
            }

            // Another account has a cap of its own.
            let grace = try await anonymous.signedUp(username: "grace")
            let graceSocket = try await grace.openPush()
            #expect(!graceSocket.isClosed)
            graceSocket.close()

            // One closes; then a new one opens.
            sockets.removeFirst().close()
            try await waitUntil("the closed socket leaves the count") {
                await server.pushHub.connectionCount(user: adaID) == 2
            } observed: {
                "\(await server.pushHub.connectionCount(user: adaID)) sockets"
            }
            sockets.append(try await ada.openPush())
            #expect(await server.pushHub.connectionCount(user: adaID) == 3)
            for socket in sockets { socket.close() }
        }
    }

    @Test("the hub itself never registers more than the cap, whatever got past the upgrade's check")
    func hubKeepsTheCap() async {
        let hub = PushHub()
        var registered = 0
        for index in 0..<5 {
            if await hub.subscribe(user: "_ada", session: "s\(index)", device: nil, limit: 3) != nil { registered += 1 }
        }
        #expect(registered == 3)
        #expect(await hub.connectionCount(user: "_ada") == 3)
        #expect(await hub.subscribe(user: "_grace", session: "g", device: nil, limit: 3) != nil)
        await hub.closeAll()
    }
}
