import Foundation
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// What systemd's `stop` (SIGTERM, a graceful shutdown) does to the clients of a running server.
@Suite("Graceful stop")
struct GracefulStopTests {
    @Test(
        "a request in flight is answered, and push sockets close with 1001 'going away' and a reason, before the server stops"
    )
    func inFlightRequestFinishesAndSocketsSayWhy() async throws {
        let server = try await TestServer.start(transport: .loopback)
        let ada = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
        let socket = try await ada.openPush()
        let gate = server.faults.closeGate(pathPrefix: "/v1/databases/private/zones/modify")
        let saving = Task { try await ada.saveZones("Contacts") }
        try await gate.waitUntilHeld()

        let stopping = Task { try await server.stop(openingGates: false) }
        try await waitUntil("the server closes the push socket") {
            socket.isClosed
        } observed: {
            "open: \(!socket.isClosed)"
        }
        let closure = try #require(socket.serverClosure, "the server closed the socket with a close frame")
        #expect(closure.code == 1001, "going away: the client connects again later")
        #expect(closure.reason == "the server is stopping; connect again in a moment")
        #expect(!stopping.isCancelled)

        // The held request is still the server's to answer: it is, and the zone is saved.
        gate.open()
        let answer = try await saving.value
        #expect(answer.savedZones.map(\.zoneID.zoneName) == ["Contacts"], "\(answer)")
        try await stopping.value
    }

    @Test("a socket whose session ends (sign-out) closes with 1000 and says to sign in again")
    func signOutClosesWithAReason() async throws {
        try await withServer(transport: .loopback) { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let socket = try await ada.openPush()
            _ = try await ada.send(.delete, "/v1/sessions/current")
            try await waitUntil("the server closes the push socket") {
                socket.isClosed
            } observed: {
                "open: \(!socket.isClosed)"
            }
            #expect(socket.serverClosure?.code == 1000)
            #expect(
                socket.serverClosure?.reason.contains("sign in again") == true,
                "\(String(describing: socket.serverClosure))")
        }
    }
}
