import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncTesting
import Testing

@Suite(
    "contacts conflicts: the log on the command line", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct ConflictsCommandTests {
    @Test("two devices change one field at once: both list the entry; restoring on one reaches the other")
    func listAndRestore() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            defer { program.stopLocalServer() }
            func run(_ device: String, _ arguments: [String]) async throws -> ContactsProgram.Outcome {
                let result = try await program.run(on: device, arguments)
                #expect(result.status == 0, "\(device) \(arguments): \(result.error)")
                return result
            }
            let quiet = try await run("laptop", ["conflicts"])
            #expect(quiet.output.hasPrefix("No conflicts"), "\(quiet.output)")

            let ada = String(
                try await run("laptop", ["add", "--name", "Ada Lovelace", "--org", "Analytical"]).output.prefix(8))
            _ = try await run("phone", ["sync"])
            // Neither has seen the other's edit; the phone's is the later one.
            _ = try await run("laptop", ["edit", ada, "--no-sync", "--org", "Navy"])
            _ = try await run("phone", ["edit", ada, "--no-sync", "--org", "Harvard"])
            _ = try await run("laptop", ["sync"])
            _ = try await run("phone", ["sync"])
            _ = try await run("laptop", ["sync"])

            for device in ["laptop", "phone"] {
                let listed = try await run(device, ["conflicts"])
                let lines = listed.output.split(separator: "\n").map(String.init)
                #expect(lines.first?.hasPrefix("1 conflict, newest first") == true, "\(device): \(listed.output)")
                #expect(lines.count == 4, "\(device): \(listed.output)")
                guard lines.count == 4 else { continue }
                #expect(lines[1].hasSuffix("  Ada Lovelace: organisation"))
                #expect(lines[2].hasPrefix("  kept  Harvard  (phone, edited "), "\(lines[2])")
                #expect(lines[3].hasPrefix("  lost  Navy  (laptop, edited "), "\(lines[3])")
            }
            let id = String(try await run("laptop", ["conflicts"]).output.split(separator: "\n")[1].prefix(8))

            let bad = try await program.run(["--device", "laptop", "conflicts", "restore", "zz"])
            #expect(bad.status != 0 && bad.error.contains("no conflict \"zz\" in the log"), "\(bad.error)")

            let restored = try await run("laptop", ["conflicts", "restore", id])
            #expect(restored.output == "Restored Ada Lovelace's organisation: Navy\n", "\(restored.output)")
            _ = try await run("phone", ["sync"])
            let shown = try await run("phone", ["show", ada])
            #expect(shown.output.contains("Navy"), "\(shown.output)")
            #expect(try await run("phone", ["conflicts"]).output.hasPrefix("No conflicts"))
            let again = try await program.run(["--device", "phone", "conflicts", "dismiss", id])
            #expect(again.status != 0 && again.error.contains("no conflict"), "\(again.error)")
        }
    }
}
