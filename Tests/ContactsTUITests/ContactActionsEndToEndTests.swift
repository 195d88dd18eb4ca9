import Foundation
import SyncTesting
import TestTraits
import Testing

/// Actions on one contact that reach beyond the app: E hands the terminal to the person's editor and takes
/// it back; M finds the contact's likely duplicates and merges them; C shows what another device's edit
/// overwrote and puts it back.
@Suite(
    "End to end: editing in $EDITOR, merging duplicates and restoring from the conflict log in the app", .serialized,
    .aheadOfTheCrowd,
    .enabled(if: EndToEnd.unavailableReason == nil, Comment(rawValue: EndToEnd.unavailableReason ?? "")),
    .timeLimit(.minutes(10)))
struct ContactActionsEndToEndTests {
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

    @Test("M asks to merge the selected contact with its likely duplicates; y merges them into it")
    func mergeDuplicates() async throws {
        let world = try await EndToEnd(devices: [("a", "ada")])
        defer { world.close() }
        try await world.cli("a", ["add", "--name", "Ada Lovelace", "--email", "ada@example.org", "--no-sync"])
        try await world.cli("a", ["add", "--name", "Lovelace, Ada", "--phone", "+44 20 7946 0000", "--no-sync"])
        try await world.cli("a", ["add", "--name", "Grace Hopper", "--no-sync"])
        try world.launch(["a"])
        let a = world.a
        try await world.waitFor(a, "Contacts · 3")
        try a.send("M")
        try await world.waitFor(a, "Merge Ada Lovelace with Lovelace, Ada?")
        try await world.waitFor(a, "They look alike: same name.")
        try a.send("n")
        try await world.waitFor(a, "Kept them apart; nothing changed.")
        try a.send("M")
        try await world.waitFor(a, "Merge duplicates")
        try a.send("y")
        try await world.waitFor(a, "Merged 2 contacts into Ada Lovelace.")
        try await world.waitFor(a, "Contacts · 2")
        try await world.waitFor(a, "+44 20 7946 0000")
        // Grace has no duplicate.
        try a.send("j")
        try await world.waitFor(a, "› Grace Hopper")
        try a.send("M")
        try await world.waitFor(a, "No likely duplicates of Grace Hopper")
    }

    @Test("the status pane counts a value another device overwrote; C shows both sides; r puts it back everywhere")
    func restoreFromConflictLog() async throws {
        let world = try await EndToEnd(devices: [("a", "ada"), ("b", "ada")])
        defer { world.close() }
        let added = try await world.cli("a", ["add", "--name", "Ada Lovelace", "--org", "Analytical"])
        let ada = String(added.prefix(8))
        try await world.cli("b", ["sync"])
        // Neither device has seen the other's edit; B's is the later one, so B's value is kept.
        try await world.cli("a", ["edit", ada, "--no-sync", "--org", "Navy"])
        try await world.cli("b", ["edit", ada, "--no-sync", "--org", "Harvard"])
        for device in ["a", "b", "a"] { try await world.cli(device, ["sync"]) }

        try world.launch(["a"])
        let a = world.a
        try await world.waitFor(a, "Organisation Harvard")
        try await world.waitFor(a, "Conflicts 1 value overwritten: press C to review")
        try a.send("C")
        try await world.waitFor(a, "› Ada Lovelace: organisation")
        try await world.waitFor(a, "kept  Harvard  (b, edited ")
        try await world.waitFor(a, "lost  Navy  (a, edited ")
        try a.send("r")
        try await world.waitFor(a, "Put Navy back as Ada Lovelace's organisation; it syncs by itself.")
        try await world.waitFor(a, "No conflicts: no edit has been overwritten")
        try a.send("q")
        try await world.waitFor(a, "Organisation Navy")
        try await world.waitFor(a, "Pending   nothing to send")

        // B hears of the restored value, and its log is empty too.
        try await world.cli("b", ["sync"])
        let shown = try await world.cli("b", ["show", ada])
        #expect(shown.contains("Navy"), "\(shown)")
        let log = try await world.cli("b", ["conflicts"])
        #expect(log.hasPrefix("No conflicts"), "\(log)")
    }
}
