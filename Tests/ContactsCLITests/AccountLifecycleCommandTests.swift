import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncServer
import SyncTesting
import Testing

/// The account's lifecycle as a person with a stolen laptop meets it through `contacts`: they list the
/// account's sessions, end the laptop's, change the password and, last, delete the account. The laptop says
/// it was signed out, keeps its contacts and unsent edit, and sends it once signed in again.
@Suite(
    "contacts account: sessions, revoke, change-password, delete", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct AccountLifecycleCommandTests {
    @Test("a device whose session was ended elsewhere says so, keeps its edit, and sends it after signin")
    func endedSessionThenSignIn() async throws {
        try await TestServer.with { server in
            try await withTemporaryDirectory { directory in
                var program = ContactsProgram(dataDirectory: directory)
                program.environment["CONTACTS_PASSWORD"] = "correct horse battery"
                program.environment["CONTACTS_PASSPHRASE"] = "orbit maple quiet lantern"
                program.server = server.baseURL
                #expect(try await program.run(on: "desk", ["account", "signup", "--username", "ada"]).status == 0)
                #expect(try await program.run(on: "laptop", ["account", "signin", "--username", "ada"]).status == 0)

                let listed = try await program.run(on: "desk", ["account", "sessions"])
                #expect(listed.status == 0, "\(listed.error)")
                #expect(listed.output.contains("laptop on "), "the laptop's label: \(listed.output)")
                #expect(listed.output.contains("* "), "this device is marked: \(listed.output)")
                let json = try await program.run(on: "desk", ["account", "sessions", "--json"])
                let sessions = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]]
                #expect(sessions?.count == 2)
                let laptop = try #require(sessions?.first { ($0["label"] as? String)?.hasPrefix("laptop") == true })
                let laptopID = try #require(laptop["id"] as? String)

                let unknown = try await program.run(
                    on: "desk", ["account", "revoke", "0123456789abcdef0123456789abcdef"])
                #expect(unknown.status != 0 && unknown.error.contains("no session"), "\(unknown.error)")
                let revoked = try await program.run(on: "desk", ["account", "revoke", laptopID])
                #expect(revoked.status == 0, "\(revoked.error)")

                // The laptop edits offline-safe: saved, not sent, and it says why and what to do.
                let added = try await program.run(on: "laptop", ["add", "--name", "Grace Hopper"])
                #expect(added.status == 0, "\(added.error)")
                #expect(
                    added.error.contains("signed out: this session was ended on another device"), "\(added.error)")
                #expect(added.error.contains("--device laptop account signin`)"), "\(added.error)")
                let synced = try await program.run(on: "laptop", ["sync"])
                #expect(synced.status != 0)
                #expect(
                    synced.error.contains("ended on another device")
                        && synced.error.contains("--device laptop account signin`)"), "\(synced.error)")
                let kept = try await program.run(on: "laptop", ["list"])
                #expect(kept.output.contains("Grace Hopper"), "the edit stays: \(kept.output)")

                // Signed in again, the laptop sends what it kept.
                let again = try await program.run(on: "laptop", ["account", "signin", "--username", "ada"])
                #expect(again.status == 0, "\(again.error)")
                #expect(try await program.run(on: "desk", ["sync"]).status == 0)
                #expect(try await program.run(on: "desk", ["list"]).output.contains("Grace Hopper"))

                // A password change signs every other device out; the desk stays in.
                program.environment["CONTACTS_NEW_PASSWORD"] = "a new and longer password"
                let changed = try await program.run(on: "desk", ["account", "change-password"])
                #expect(changed.status == 0, "\(changed.error)")
                let laptopAfter = try await program.run(on: "laptop", ["sync"])
                #expect(laptopAfter.status != 0 && laptopAfter.error.contains("ended on another device"))
                #expect(try await program.run(on: "desk", ["sync"]).status == 0)
                let oldPassword = try await program.run(on: "laptop", ["account", "signin", "--username", "ada"])
                #expect(oldPassword.status != 0, "the old password no longer signs in")

                // Deleting needs --yes; then every device of the account is refused.
                let unconfirmed = try await program.run(on: "desk", ["account", "delete"])
                #expect(unconfirmed.status != 0 && unconfirmed.error.contains("--yes"), "\(unconfirmed.error)")
                program.environment["CONTACTS_PASSWORD"] = "a new and longer password"
                let deleted = try await program.run(on: "desk", ["account", "delete", "--yes"])
                #expect(deleted.status == 0, "\(deleted.error)")
                #expect(
                    try await program.run(on: "desk", ["list"]).output.contains("Grace Hopper"),
                    "the desk keeps its contacts")
                let signin = try await program.run(on: "laptop", ["account", "signin", "--username", "ada"])
                #expect(signin.status != 0, "the account is gone: \(signin.output)")
            }
        }
    }
}

/// An account whose storage on the server is full, as its owner meets it: edits are kept on the device and
/// the commands say how full the account is; once there is room, the next sync sends them.
@Suite(
    "contacts on a server whose storage for the account is full", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct QuotaCommandTests {
    @Test("over quota: the edit stays pending, the message gives used and limit; with room again it is sent")
    func fullAccount() async throws {
        let storage = TemporaryFiles.path("quota", extension: "sqlite")
        var configuration = SyncServerConfiguration.testing
        configuration.defaultQuotaBytes = 4_000
        let server = try await TestServer.start(configuration: configuration, storagePath: storage)
        defer { try? FileManager.default.removeItem(atPath: storage) }
        do {
            try await withTemporaryDirectory { directory in
                var program = ContactsProgram(dataDirectory: directory)
                program.environment["CONTACTS_PASSWORD"] = "correct horse battery"
                program.environment["CONTACTS_PASSPHRASE"] = "orbit maple quiet lantern"
                let arguments = ["--server", server.baseURL]
                #expect(try await program.run(arguments + ["account", "signup", "--username", "ada"]).status == 0)
                let note = String(repeating: "A long note that takes room. ", count: 60)
                var refused: ContactsProgram.Outcome?
                for index in 1...6 {
                    let added = try await program.run(arguments + ["add", "--name", "Person \(index)", "--note", note])
                    #expect(added.status == 0, "\(added.error)")
                    if added.error.contains("storage for this account is full") {
                        refused = added
                        break
                    }
                }
                let full = try #require(refused, "some add went over the 4,000-byte quota")
                #expect(full.error.contains(" of 4.0 KB)"), "used and limit: \(full.error)")
                let status = try await program.run(arguments + ["sync"])
                #expect(status.status != 0 && status.error.contains("storage for this account is full"))
                let pending = try await program.run(arguments + ["status"])
                #expect(
                    !pending.output.contains("pending:    0 change"),
                    "the refused edit stays pending: \(pending.output)")

                // The operator gives the account room: the next sync sends what waited.
                _ = try await server.store.setQuota(username: "ada", .unlimited)
                let synced = try await program.run(arguments + ["sync"])
                #expect(synced.status == 0, "\(synced.error)")
                #expect(synced.output.contains(", 0 pending"), "\(synced.output)")
            }
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }
}
