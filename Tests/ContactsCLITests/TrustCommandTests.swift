import ContactsTesting
import Foundation
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// Issue 65's commands through the real `contacts` program and server: safety numbers compared and
/// verified, invitations listed, accepted by name, withdrawn, a permission changed, and an account
/// recovered on a new device with the recovery key sign-up showed.
@Suite(
    "contacts: fingerprints, invitations, permissions, recovery", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct TrustCommandTests {
    @Test(
        "sign-up shows a recovery key; invitations show the sender's safety number; verify checks the number; permission and cancel work; recover sets a new passphrase with nothing lost"
    )
    func commands() async throws {
        try await TestServer.with { server in
            try await withTemporaryDirectory { directory in
                var ada = ContactsProgram(dataDirectory: directory)
                ada.server = server.baseURL
                ada.environment["CONTACTS_PASSWORD"] = "correct horse battery"
                ada.environment["CONTACTS_PASSPHRASE"] = "ada's passphrase words"
                var grace = ada
                grace.environment["CONTACTS_PASSWORD"] = "another good password"
                grace.environment["CONTACTS_PASSPHRASE"] = "grace's passphrase words"

                let signedUp = try await ada.run(on: "ada-desk", ["account", "signup", "--username", "ada"])
                #expect(signedUp.status == 0, "\(signedUp.error)")
                #expect(signedUp.error.contains("recovery key"), "\(signedUp.error)")
                let recoveryKey = try #require(signedUp.output.split(separator: "\n").last.map(String.init))
                #expect(recoveryKey.split(separator: "-").count == 9, "\(signedUp.output)")
                #expect(
                    try await grace.run(on: "grace-phone", ["account", "signup", "--username", "grace"]).status == 0)

                let adaNumber = try await ada.run(on: "ada-desk", ["account", "fingerprint"])
                let graceNumber = try await grace.run(on: "grace-phone", ["account", "fingerprint"])
                #expect(adaNumber.status == 0 && graceNumber.status == 0, "\(adaNumber.error) \(graceNumber.error)")
                let adaSafety = try #require(adaNumber.output.split(separator: "\n").first.map(String.init))
                let graceSafety = try #require(graceNumber.output.split(separator: "\n").first.map(String.init))
                #expect(adaSafety.split(separator: " ").count == 6)

                #expect(try await ada.run(on: "ada-desk", ["book", "create", "Family"]).status == 0)
                #expect(try await ada.run(on: "ada-desk", ["add", "--book", "Family", "--name", "Mum"]).status == 0)
                #expect(try await ada.run(on: "ada-desk", ["book", "share", "Family", "--with", "grace"]).status == 0)
                let invitations = try await grace.run(on: "grace-phone", ["book", "invitations"])
                #expect(invitations.status == 0, "\(invitations.error)")
                #expect(invitations.output.contains("from ada"), "\(invitations.output)")
                #expect(invitations.output.contains(adaSafety), "the sender's safety number: \(invitations.output)")
                let accepted = try await grace.run(on: "grace-phone", ["book", "accept", "ada"])
                #expect(accepted.status == 0, "\(accepted.error)")
                #expect(accepted.error.contains(adaSafety), "shown before accepting: \(accepted.error)")

                // Ada compares Grace's number: a wrong one verifies nothing, hers does.
                let before = try await ada.run(on: "ada-desk", ["book", "participants", "Family"])
                #expect(before.output.contains("grace") && before.output.contains(graceSafety), "\(before.output)")
                #expect(before.output.contains("not verified"), "\(before.output)")
                let wrong = try await ada.run(
                    on: "ada-desk", ["book", "verify", "Family", "grace", "00000 00000 00000 00000 00000 00000"])
                #expect(wrong.status != 0)
                #expect(wrong.error.contains("not the safety number"), "\(wrong.error)")
                let verified = try await ada.run(on: "ada-desk", ["book", "verify", "Family", "grace", graceSafety])
                #expect(verified.status == 0, "\(verified.error)")
                let after = try await ada.run(on: "ada-desk", ["book", "participants", "Family"])
                #expect(after.output.contains("\tverified"), "\(after.output)")

                // Read-only for Grace, from Ada's side; Grace's device learns it.
                let downgraded = try await ada.run(
                    on: "ada-desk", ["book", "permission", "Family", "grace", "read-only"])
                #expect(downgraded.status == 0, "\(downgraded.error)")
                #expect(try await grace.run(on: "grace-phone", ["sync"]).status == 0)
                let books = try await grace.run(on: "grace-phone", ["book", "list"])
                #expect(books.output.contains("Family") && books.output.contains("read-only"), "\(books.output)")

                // An invitation withdrawn before it is accepted is gone for Grace.
                #expect(try await ada.run(on: "ada-desk", ["book", "create", "Work"]).status == 0)
                #expect(try await ada.run(on: "ada-desk", ["book", "share", "Work", "--with", "grace"]).status == 0)
                #expect(try await ada.run(on: "ada-desk", ["book", "cancel", "Work", "grace"]).status == 0)
                let none = try await grace.run(on: "grace-phone", ["book", "invitations"])
                #expect(none.output.contains("received: none"), "\(none.output)")

                // A new device, the passphrase forgotten: a wrong key changes nothing, the right one recovers.
                var newDevice = ada
                newDevice.environment["CONTACTS_PASSPHRASE"] = nil
                newDevice.environment["CONTACTS_NEW_PASSPHRASE"] = "a brand new passphrase"
                newDevice.environment["CONTACTS_RECOVERY_KEY"] = "babab-babab-babab-babab-babab-babab-babab-babab-babab"
                let garbled = try await newDevice.run(on: "ada-new", ["account", "recover", "--username", "ada"])
                #expect(garbled.status != 0)
                #expect(garbled.error.contains("checksum") || garbled.error.contains("word"), "\(garbled.error)")
                newDevice.environment["CONTACTS_RECOVERY_KEY"] = recoveryKey
                let recovered = try await newDevice.run(on: "ada-new", ["account", "recover", "--username", "ada"])
                #expect(recovered.status == 0, "\(recovered.error)")
                let newKey = try #require(recovered.output.split(separator: "\n").last.map(String.init))
                #expect(newKey != recoveryKey && newKey.split(separator: "-").count == 9, "\(recovered.output)")
                let list = try await newDevice.run(on: "ada-new", ["list"])
                #expect(list.output.contains("Mum"), "\(list.output)")
                let spent = try await newDevice.run(on: "ada-other", ["account", "recover", "--username", "ada"])
                #expect(spent.status != 0)
                #expect(spent.error.contains("not the account's recovery key"), "\(spent.error)")
            }
        }
    }

    @Test(
        "the zero-setup account shows its recovery key once, keeps it nowhere, and recover sets a new passphrase on it"
    )
    func localAccountRecovery() async throws {
        try await withTemporaryDirectory { temporary in
            let directory = temporary + "/contacts"
            var program = ContactsProgram(dataDirectory: directory)
            defer { program.stopLocalServer() }
            let first = try await program.run(["add", "--name", "Ada Lovelace"])
            #expect(first.status == 0, "\(first.error)")
            let line = try #require(
                first.error.split(separator: "\n").first { $0.contains("recovery key") }.map(String.init),
                "\(first.error)")
            let recoveryKey = try #require(line.split(separator: " ").last.map(String.init))
            #expect(recoveryKey.split(separator: "-").count == 9, "\(line)")
            let second = try await program.run(["list"])
            #expect(!second.error.contains("recovery key"), "shown once: \(second.error)")
            // Kept nowhere in the data directory.
            let enumerator = FileManager.default.enumerator(atPath: directory)
            while let relative = enumerator?.nextObject() as? String {
                guard let data = FileManager.default.contents(atPath: directory + "/" + relative) else { continue }
                #expect(
                    data.range(of: Data(recoveryKey.utf8)) == nil, "the recovery key is written in \(relative)")
            }

            // The server stopped: recover starts it, as any command does.
            program.stopLocalServer()
            program.environment["CONTACTS_RECOVERY_KEY"] = recoveryKey
            program.environment["CONTACTS_NEW_PASSPHRASE"] = "a new local passphrase"
            let recovered = try await program.run(["account", "recover"])
            #expect(recovered.status == 0, "\(recovered.error)")
            let shown = try await program.run(["account", "passphrase"])
            #expect(shown.output.trimmingCharacters(in: .whitespacesAndNewlines) == "a new local passphrase")
            let other = try await program.run(["--device", "laptop", "list"])
            #expect(other.status == 0 && other.output.contains("Ada Lovelace"), "\(other.error)")
        }
    }
}
