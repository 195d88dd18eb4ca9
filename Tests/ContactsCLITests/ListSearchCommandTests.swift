import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncTesting
import Testing

@Suite(
    "contacts list WORDS: every word, anywhere or in its scope", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct ListSearchCommandTests {
    @Test(
        "words find contacts in any field; scopes limit a word to one field; books by name; nothing found is an error")
    func scopedWords() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            // A command that syncs starts the zero-setup server: it must not outlive the test.
            defer { program.stopLocalServer() }
            #expect(try await program.run(["book", "create", "Work"]).status == 0)
            for arguments in [
                ["--name", "Łukasz Nowak", "--email", "lukasz@example.pl", "--group", "Orchestra", "--note", "cello"],
                [
                    "--name", "Ada Lovelace", "--org", "Example Engines", "--phone", "+44 20 7946 0000", "--book",
                    "Work",
                ],
                ["--name", "Grace Hopper", "--email", "grace@navy.example", "--city", "Arlington"],
            ] {
                let added = try await program.run(["add", "--no-sync"] + arguments)
                #expect(added.status == 0, "\(added.error)")
            }
            func names(_ words: String...) async throws -> [String] {
                let listed = try await program.run(["list"] + words)
                #expect(listed.status == 0, "\(words): \(listed.error)")
                return listed.output.split(separator: "\n").map { String($0.split(separator: "\t")[1]) }
            }
            #expect(try await names("example") == ["Ada Lovelace", "Grace Hopper", "Łukasz Nowak"])
            #expect(try await names("email:example") == ["Grace Hopper", "Łukasz Nowak"])
            #expect(try await names("org:example") == ["Ada Lovelace"])
            #expect(try await names("LUKASZ", "cello") == ["Łukasz Nowak"])
            #expect(try await names("group:orchestra") == ["Łukasz Nowak"])
            #expect(try await names("tel:7946") == ["Ada Lovelace"])
            #expect(try await names("book:work") == ["Ada Lovelace"])
            #expect(try await names("arlington") == ["Grace Hopper"])
            let none = try await program.run(["list", "email:nobody"])
            #expect(none.status != 0 && none.error.contains("no contact matches 'email:nobody'"), "\(none.error)")
            let mutt = try await program.run(["query", "group:orchestra"])
            #expect(mutt.output.hasSuffix("lukasz@example.pl\tŁukasz Nowak\t\n"), "\(mutt.output)")
        }
    }
}
