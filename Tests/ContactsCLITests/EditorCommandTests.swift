import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncTesting
import Testing

@Suite(
    "contacts edit --editor: the contact as a text file in $EDITOR", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct EditorCommandTests {
    @Test("a file with a problem opens again with it at the top; the corrected file is saved")
    func problemThenFixed() async throws {
        try await withTemporaryDirectory { directory in
            let editor = try ScriptedEditor.make(
                in: directory,
                edits: ["s/^Email: .*/Email: work: ada@/", "s/ada@$/ada@example.org/; s/^Birthday:.*/Birthday: 12-10/"])
            var program = ContactsProgram(dataDirectory: directory)
            // A command that syncs starts the zero-setup server: it must not outlive the test.
            defer { program.stopLocalServer() }
            program.environment = ["EDITOR": editor, "VISUAL": ""]
            let added = try await program.run(["add", "--no-sync", "--name", "Ada", "--email", "ada@old.example"])
            let id = String(added.output.prefix(8))
            let edited = try await program.run(["edit", id, "--editor", "--no-sync"])
            #expect(edited.status == 0, "\(edited.error)")
            let second = try String(contentsOfFile: directory + "/shown-2.txt", encoding: .utf8)
            #expect(second.hasPrefix("# ✖ line 8: 'ada@' is not an email address"), "\(second)")
            let shown = try await program.run(["show", id])
            #expect(shown.output.contains("Email:        ada@example.org (work)\n"), "\(shown.output)")
            #expect(shown.output.contains("Birthday:     10 December\n"))
        }
    }

    @Test("quitting without saving, an emptied file or a failing editor change nothing; --editor stands alone")
    func nothingChanged() async throws {
        try await withTemporaryDirectory { directory in
            var program = ContactsProgram(dataDirectory: directory)
            // A command that syncs starts the zero-setup server: it must not outlive the test.
            defer { program.stopLocalServer() }
            let added = try await program.run(["add", "--no-sync", "--name", "Ada", "--email", "ada@example.org"])
            let id = String(added.output.prefix(8))
            let before = try await program.run(["show", id, "--json"]).output
            let emptying = try ScriptedEditor.make(in: directory, edits: ["", "d"])
            for (editor, status, message) in [
                (emptying, Int32(0), "Nothing changed."), (emptying, 0, "Nothing changed."),
                ("false", 1, "the editor 'false' exited with status 1; nothing changed"),
                ("no-such-editor-here", 1, "the editor 'no-such-editor-here' could not be started"),
            ] {
                program.environment = ["EDITOR": editor, "VISUAL": ""]
                let result = try await program.run(["edit", id, "--editor", "--no-sync"])
                #expect(result.status == status, "\(editor): \(result.error)")
                #expect((result.output + result.error).contains(message), "\(editor): \(result.output) \(result.error)")
            }
            #expect(try await program.run(["show", id, "--json"]).output == before)
            let both = try await program.run(["edit", id, "--editor", "--name", "X", "--no-sync"])
            #expect(both.status != 0 && both.error.contains("--editor edits the whole contact"))
        }
    }
}
