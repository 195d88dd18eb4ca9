import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncTesting
import Testing

@Suite(
    "contacts: birthdays, anniversaries and groups on the command line", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct DatesAndGroupsCommandTests {
    @Test("set, show, list by group, count groups and list the coming birthdays; bad dates are refused")
    func datesAndGroups() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            // A command that syncs starts the zero-setup server: it must not outlive the test.
            defer { program.stopLocalServer() }
            let added = try await program.run([
                "add", "--no-sync", "--name", "Ada Lovelace", "--birthday", "1815-12-10", "--anniversary", "07-08",
                "--group", "Family", "--group", "Maths",
            ])
            #expect(added.status == 0, "\(added.error)")
            let ada = String(added.output.prefix(8))
            let grace = try await program.run([
                "add", "--no-sync", "--name", "Grace Hopper", "--birthday", "12-09", "--group", "maths",
            ])
            #expect(grace.status == 0, "\(grace.error)")
            #expect(try await program.run(["add", "--no-sync", "--name", "Alan Turing"]).status == 0)

            let shown = try await program.run(["show", ada])
            #expect(shown.output.contains("Birthday:     10 December 1815\n"), "\(shown.output)")
            #expect(shown.output.contains("Anniversary:  8 July\n"))
            #expect(shown.output.contains("Groups:       Family, Maths\n"))
            let json = try await program.run(["show", ada, "--json"])
            #expect(json.output.contains("\"birthday\" : \"1815-12-10\"") && json.output.contains("\"--07-08\""))

            let maths = try await program.run(["list", "--group", "MATHS"])
            #expect(
                maths.output.split(separator: "\n").map { $0.split(separator: "\t")[1] } == [
                    "Ada Lovelace", "Grace Hopper",
                ])
            let none = try await program.run(["list", "--group", "Chess"])
            #expect(none.status != 0 && none.error.contains("no contact is in the group 'Chess'"), "\(none.error)")
            #expect(try await program.run(["groups"]).output == "Family\t1\nMaths\t2\n")

            let soon = try await program.run(["birthdays", "--from", "2026-12-01", "--days", "9"])
            #expect(
                soon.output
                    == "2026-12-09\tin 8 days\tGrace Hopper\tbirthday\n2026-12-10\tin 9 days\tAda Lovelace\tbirthday (211)\n"
            )
            let later = try await program.run(["birthdays", "--from", "2027-07-08", "--days", "0"])
            #expect(later.output == "2027-07-08\ttoday\tAda Lovelace\tanniversary\n")
            let quiet = try await program.run(["birthdays", "--from", "2027-01-01", "--days", "5"])
            #expect(quiet.status == 0 && quiet.output.hasPrefix("No birthday or anniversary in the next 5 day(s)."))

            let edited = try await program.run(["edit", ada, "--no-sync", "--birthday", "", "--clear-groups"])
            #expect(edited.status == 0, "\(edited.error)")
            let after = try await program.run(["show", ada])
            #expect(
                !after.output.contains("Birthday") && !after.output.contains("Groups")
                    && after.output.contains("Anniversary"))
            #expect(try await program.run(["groups"]).output == "maths\t1\n", "named as its one contact names it")

            for (arguments, message) in [
                (
                    ["edit", ada, "--no-sync", "--birthday", "12/10/1815"],
                    "the birthday '12/10/1815' is not a date; write 1985-04-12"
                ),
                (
                    ["edit", ada, "--no-sync", "--anniversary", "1815-02-30"],
                    "the anniversary '1815-02-30' is not a date"
                ),
                (["edit", ada, "--no-sync", "--group", "a\u{1B}b"], "the group contains control characters"),
                (["birthdays", "--days", "400"], "--days must be from 0 to 366"),
                (["birthdays", "--from", "12-01"], "'12-01' is not a day; write it as 2026-12-01"),
            ] {
                let result = try await program.run(arguments)
                #expect(result.status != 0, "\(arguments)")
                #expect(result.error.contains(message), "\(arguments): \(result.error)")
            }
            #expect(try await program.run(["show", ada]).output == after.output, "a refused edit changed nothing")
        }
    }
}
