import Foundation
import SyncTesting
import Testing

/// The app hands its terminal to the person's editor for E, and takes it back.
@Suite(
    "End to end: editing a contact in $EDITOR from the app", .serialized,
    .enabled(if: EndToEnd.unavailableReason == nil, Comment(rawValue: EndToEnd.unavailableReason ?? "")),
    .timeLimit(.minutes(10)))
struct EditorEndToEndTests {
    @Test("E opens the editor; a problem reopens it with the problem on top; the fix is saved; unchanged is nothing")
    func editInEditor() async throws {
        let world = try await EndToEnd(devices: [("a", "ada")])
        defer { world.close() }
        let scripts = world.directory.appendingPathComponent("editor").path
        try FileManager.default.createDirectory(atPath: scripts, withIntermediateDirectories: true)
        let editor = try ScriptedEditor.make(
            in: scripts,
            edits: [
                "s/^Email: .*/Email: work: ada@/",
                "s/ada@$/ada@example.org/; s/^Birthday:.*/Birthday: 1815-12-10/; s/^Groups:.*/Groups: Maths/",
            ])
        try await world.cli("a", ["add", "--name", "Ada Lovelace", "--email", "ada@old.example", "--no-sync"])
        try world.launch(["a"], environment: ["EDITOR": editor, "VISUAL": ""])
        let a = world.a
        try await world.waitFor(a, "Email        ada@old.example")
        try a.send("E")
        try await world.waitFor(a, "Saved Ada Lovelace")
        try await world.waitFor(a, "Birthday     10 December 1815")
        try await world.waitFor(a, "work: ada@example.org")
        try await world.waitFor(a, "Groups       Maths")
        let reopened = try String(contentsOfFile: scripts + "/shown-2.txt", encoding: .utf8)
        #expect(reopened.hasPrefix("# ✖ line "), "\(reopened)")
        #expect(reopened.contains("'ada@' is not an email address"))

        // Saved as shown: nothing changes.
        try a.send("E")
        try await world.waitFor(a, "Nothing changed in Ada Lovelace.")
    }
}
