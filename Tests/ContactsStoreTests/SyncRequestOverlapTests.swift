import ContactsModel
import ContactsTesting
import Foundation
import SyncTesting
import Testing

@testable import ContactsStore

/// A sync's requests that do not depend on what its first fetch brings go beside that fetch: each round
/// trip one after another is a few milliseconds of every command.
@Suite("A sync's requests: what does not wait for the fetch goes beside it")
struct SyncRequestOverlapTests {
    @Test("while the first fetch is held at the server, the keys and the server's limits are already asked for")
    func keysAndLimitsBesideTheFetch() async throws {
        try await withContactsDevices { server, directory, devices in
            var device: ContactsDevice? = try openDevice("laptop", directory: directory, server: server)
            try await device!.account.signIn(
                username: "ada", password: "correct horse battery", passphrase: testPassphrase)
            try device!.contacts.add(Contact(name: "Ada"))
            try await device!.sync()
            // The next command, as a new process starts it: no key held, no limit known, one edit to send.
            device = nil
            let laptop = try openDevice("laptop", directory: directory, server: server)
            try laptop.edit("Ada") { $0.notes = "Analytical Engine" }

            let fetch = server.faults.closeGate(pathPrefix: "/v1/databases/private/zones/changes")
            let beside = [
                server.faults.closeGate(pathPrefix: "/v1/account/encryption", method: .get),
                server.faults.closeGate(pathPrefix: "/v1/databases/private/zones/list"),
                server.faults.closeGate(pathPrefix: "/v1/limits"),
            ]
            let sync = Task { try await laptop.sync() }
            try await fetch.waitUntilHeld(timeout: .seconds(120))
            for gate in beside { try await gate.waitUntilHeld(timeout: .seconds(120)) }
            #expect(fetch.heldCount == 1, "the fetch was let through before the keys were asked for")
            server.faults.openAllGates()
            try await sync.value

            #expect(try laptop.store.pendingCount() == 0)
            try await devices[1].sync()
            #expect(try devices[1].contact(named: "Ada").notes == "Analytical Engine")
        }
    }
}
