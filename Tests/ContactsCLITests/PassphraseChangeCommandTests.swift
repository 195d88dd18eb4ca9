import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// A passphrase change as two devices of one person meet it through `contacts`, against the real server:
/// the desk changes it; the laptop, which still has the old one, says at its next sync that it was changed
/// on another device, keeps its contacts and an unsent edit, and sends the edit once given the new one. The
/// change re-wraps keys only: every record on the server is as it was, byte for byte.
@Suite(
    "contacts account change-passphrase", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct PassphraseChangeCommandTests {
    static let password = "correct horse battery"

    /// Every record of every zone of the account, as the server answers them (sealed values and change tags).
    private func serverRecords(_ server: TestServer) async throws -> [RecordZone.ID: [String: RecordValue]] {
        let ada = try await TestClient(baseURL: server.baseURL).signedIn(username: "ada", password: Self.password)
        var records: [RecordZone.ID: [String: RecordValue]] = [:]
        for zone in try await ada.listZones() {
            let changes = try await ada.fetchAllZoneChanges(zone.zoneID)
            records[zone.zoneID] = Dictionary(
                uniqueKeysWithValues: changes.modifications.map { ($0.recordID.recordName, $0) })
        }
        return records
    }

    @Test("the other device says the passphrase changed, keeps its edit, and sends it with the new passphrase")
    func otherDeviceNeedsTheNewPassphrase() async throws {
        try await TestServer.with { server in
            try await withTemporaryDirectory { directory in
                var program = ContactsProgram(dataDirectory: directory)
                program.environment["CONTACTS_PASSWORD"] = Self.password
                program.environment["CONTACTS_PASSPHRASE"] = "orbit maple quiet lantern"
                program.server = server.baseURL
                #expect(try await program.run(on: "desk", ["account", "signup", "--username", "ada"]).status == 0)
                #expect(try await program.run(on: "laptop", ["account", "signin", "--username", "ada"]).status == 0)
                #expect(
                    try await program.run(on: "desk", ["add", "--name", "Ada Lovelace", "--email", "ada@example.com"])
                        .status == 0)
                #expect(try await program.run(on: "laptop", ["sync"]).status == 0)
                let before = try await serverRecords(server)
                #expect(before.values.contains { $0.values.contains { $0.recordType == "Contact" } })

                program.environment["CONTACTS_NEW_PASSPHRASE"] = "harbor violet seven candles"
                let changed = try await program.run(on: "desk", ["account", "change-passphrase"])
                #expect(changed.status == 0, "\(changed.error)")
                #expect(changed.error.contains("passphrase changed"), "\(changed.error)")
                #expect(try await serverRecords(server) == before, "the change sealed no record again")
                let shown = try await program.run(on: "desk", ["account", "passphrase"])
                #expect(shown.output.trimmingCharacters(in: .whitespacesAndNewlines) == "harbor violet seven candles")
                #expect(
                    try await program.run(on: "desk", ["sync"]).status == 0, "the desk syncs with the new passphrase")

                // The laptop still has the old passphrase: its edit is kept, and it says why it is not sent.
                let added = try await program.run(on: "laptop", ["add", "--name", "Grace Hopper"])
                #expect(added.status == 0, "\(added.error)")
                #expect(added.error.contains("passphrase was changed on another device"), "\(added.error)")
                #expect(added.error.contains("contacts account passphrase --set"), "\(added.error)")
                let synced = try await program.run(on: "laptop", ["sync"])
                #expect(synced.status != 0)
                #expect(synced.error.contains("passphrase was changed on another device"), "\(synced.error)")
                let kept = try await program.run(on: "laptop", ["list"])
                #expect(kept.output.contains("Grace Hopper") && kept.output.contains("Ada Lovelace"), "\(kept.output)")
                let status = try await program.run(on: "laptop", ["status"])
                #expect(status.output.contains("pending:    1 change(s) not yet on the server"), "\(status.output)")
                #expect(try await serverRecords(server) == before, "nothing reached the server")

                // The old passphrase no longer signs a new device in.
                let phone = try await program.run(on: "phone", ["account", "signin", "--username", "ada"])
                #expect(phone.status != 0 && phone.error.contains("passphrase does not open"), "\(phone.error)")

                // Given the new passphrase, the laptop sends its edit; the desk receives it.
                program.environment["CONTACTS_PASSPHRASE"] = "harbor violet seven candles"
                let set = try await program.run(on: "laptop", ["account", "passphrase", "--set"])
                #expect(set.status == 0, "\(set.error)")
                let sent = try await program.run(on: "laptop", ["sync"])
                #expect(sent.status == 0, "\(sent.error)")
                #expect(sent.output.contains("0 pending"), "\(sent.output)")
                #expect(try await program.run(on: "desk", ["sync"]).status == 0)
                let desk = try await program.run(on: "desk", ["list"])
                #expect(desk.output.contains("Grace Hopper") && desk.output.contains("Ada Lovelace"), "\(desk.output)")
            }
        }
    }

    @Test("a device whose passphrase was changed elsewhere cannot change it again, and changes nothing")
    func changeFromAStaleDevice() async throws {
        try await TestServer.with { server in
            try await withTemporaryDirectory { directory in
                var program = ContactsProgram(dataDirectory: directory)
                program.environment["CONTACTS_PASSWORD"] = Self.password
                program.environment["CONTACTS_PASSPHRASE"] = "orbit maple quiet lantern"
                program.server = server.baseURL
                #expect(try await program.run(on: "desk", ["account", "signup", "--username", "ada"]).status == 0)
                #expect(try await program.run(on: "laptop", ["account", "signin", "--username", "ada"]).status == 0)
                #expect(try await program.run(on: "desk", ["add", "--name", "Ada Lovelace"]).status == 0)
                program.environment["CONTACTS_NEW_PASSPHRASE"] = "harbor violet seven candles"
                #expect(try await program.run(on: "desk", ["account", "change-passphrase"]).status == 0)
                let after = try await serverRecords(server)

                program.environment["CONTACTS_NEW_PASSPHRASE"] = "a third passphrase entirely"
                let stale = try await program.run(on: "laptop", ["account", "change-passphrase"])
                #expect(stale.status != 0)
                #expect(stale.error.contains("changed on another device"), "\(stale.error)")
                #expect(try await serverRecords(server) == after)
                #expect(
                    try await program.run(on: "desk", ["sync"]).status == 0,
                    "the desk's passphrase still opens the account")
            }
        }
    }
}
