import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncTesting
import Testing

@Suite(
    "contacts duplicates and contacts merge", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct DuplicatesCommandTests {
    @Test("duplicates lists each group with why and the merge command; merge keeps the first; mistakes change nothing")
    func findAndMerge() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            // A command that syncs starts the zero-setup server: it must not outlive the test.
            defer { program.stopLocalServer() }
            #expect(try await program.run(["duplicates"]).output == "No likely duplicates among 0 contacts.\n")
            var ids: [String] = []
            for arguments in [
                ["--name", "Ada Lovelace", "--email", "ada@example.org"],
                ["--name", "Lovelace, Ada", "--phone", "+44 20 7946 0000", "--group", "Maths"],
                ["--name", "Grace Hopper"],
            ] {
                let added = try await program.run(["add", "--no-sync"] + arguments)
                ids.append(String(added.output.prefix(8)))
            }
            let found = try await program.run(["duplicates"])
            #expect(
                found.output == """
                    Ada Lovelace, Lovelace, Ada: same name
                      \(ids[0])\tAda Lovelace\tada@example.org\t
                      \(ids[1])\tLovelace, Ada\t\t+44 20 7946 0000
                      merge with: contacts merge \(ids[0]) \(ids[1])

                    """)
            for (arguments, message) in [
                (["merge", ids[0]], "give two contacts or more"),
                (["merge", ids[0], "ffffffff"], "no contact has the ID 'ffffffff'"),
                (["merge", ids[0], ids[0], "--no-sync"], "each once"),
            ] {
                let result = try await program.run(arguments)
                #expect(result.status != 0 && result.error.contains(message), "\(arguments): \(result.error)")
            }
            let merged = try await program.run(["merge", ids[0], ids[1], "--no-sync"])
            #expect(merged.status == 0, "\(merged.error)")
            #expect(merged.output.hasPrefix("Merged 2 contacts into Ada Lovelace ("))
            let shown = try await program.run(["show", ids[0]])
            #expect(
                shown.output.contains("Phone:        +44 20 7946 0000") && shown.output.contains("Groups:       Maths"))
            let listed = try await program.run(["list"])
            #expect(listed.output.split(separator: "\n").count == 2)
            #expect(try await program.run(["duplicates"]).output == "No likely duplicates among 2 contacts.\n")
        }
    }
}
