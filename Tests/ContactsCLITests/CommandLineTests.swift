import ContactsLocal
import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import GRDB
import SyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite(
    "contacts: the command line", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct CommandLineTests {
    @Test("first run needs no setup: add on one device, sync and list on another")
    func zeroSetup() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            defer { program.stopLocalServer() }
            let added = try await program.run(["add", "--name", "Ada"])
            #expect(added.status == 0, "\(added.error)")
            #expect(UUID(uuidString: added.output.trimmingCharacters(in: .whitespacesAndNewlines)) != nil)
            let synced = try await program.run(["--device", "laptop", "sync"])
            #expect(synced.status == 0, "\(synced.error)")
            let listed = try await program.run(["--device", "laptop", "list"])
            #expect(listed.output.contains("Ada"))
            // The server's files are the user's alone.
            let attributes = try FileManager.default.attributesOfItem(atPath: DataDirectory.Layout(directory).server)
            #expect((attributes[.posixPermissions] as? Int) == 0o700)
            let account = try FileManager.default.attributesOfItem(atPath: DataDirectory.Layout(directory).localAccount)
            #expect((account[.posixPermissions] as? Int) == 0o600)
            // Its password is in that file: the server hashes it at bcrypt's lowest cost.
            let hashes = try await ContactsProgram.passwordHashes(
                inServerStorage: DataDirectory.Layout(directory).serverStorage)
            #expect(hashes.count == 1 && hashes.allSatisfy { $0.hasPrefix("$2b$04$") }, "\(hashes)")
        }
    }

    @Test("bad input: a clear message, a non-zero exit, nothing changed")
    func badInput() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            // A command that syncs starts the zero-setup server: it must not outlive the test.
            defer { program.stopLocalServer() }
            let cases: [([String], String)] = [
                (["add", "--name", "", "--no-sync"], "name is empty"),
                (["add", "--name", "Bob", "--email", "bob-at-example", "--no-sync"], "not an email"),
                (["add", "--name", "Evil\u{1B}[31m", "--no-sync"], "control characters"),
                (["add", "--name", String(repeating: "n", count: 501), "--no-sync"], "too long"),
                (["add", "--no-sync"], "--name is required"),
                (["edit", "ffff0000", "--name", "X", "--no-sync"], "no contact has the ID"),
                (["delete", "nope", "--no-sync"], "no contact has the ID"),
                (["--device", "../escape", "list"], "--device must be"),
                (["--server", "ftp://example.org", "list"], "--server must be"),
                (["import", "/nonexistent.vcf", "--no-sync"], "cannot read"),
            ]
            for (arguments, message) in cases {
                let result = try await program.run(arguments)
                #expect(result.status != 0, "\(arguments)")
                #expect(result.error.contains(message), "\(arguments): \(result.error)")
                #expect(!result.error.contains("\u{1B}"), "control characters are not echoed back")
            }
            let listed = try await program.run(["list", "--json"])
            #expect(listed.output.trimmingCharacters(in: .whitespacesAndNewlines) == "[\n\n]")
        }
    }

    @Test("with an explicit server: account, add, a sync failure reported and kept, status and JSON output")
    func explicitServer() async throws {
        try await withTemporaryDirectory { directory in
            // A real server process, so that stopping it is what a user sees: connections refused.
            let port = try LoopbackPort.unused()
            let url = "http://127.0.0.1:\(port)"
            let server = try ChildProcess([
                ContactsProgram.path, "server", "--port", String(port), "--storage", directory + "/server.sqlite",
                "--bcrypt-cost", "5",
            ])
            defer { server.stop() }
            var program = ContactsProgram(dataDirectory: directory)
            // A command that syncs starts the zero-setup server: it must not outlive the test.
            defer { program.stopLocalServer() }
            program.environment["CONTACTS_PASSWORD"] = "a long enough password"
            // The server takes a moment to listen: until then signing up cannot reach it.
            var signup = ContactsProgram.Outcome(status: -1, output: "", error: "")
            try await waitUntil("signing up reaches the server on port \(port)", poll: .milliseconds(100)) {
                signup = try await program.run(["--server", url, "account", "signup", "--username", "grace"])
                return !(signup.status != 0 && signup.error.contains("could not reach")) || !server.isRunning
            } observed: {
                "server running: \(server.isRunning); contacts said: \(signup.error)"
            }
            #expect(signup.status == 0, "\(signup.error)")
            let hashes = try await ContactsProgram.passwordHashes(inServerStorage: directory + "/server.sqlite")
            #expect(hashes.count == 1 && hashes.allSatisfy { $0.hasPrefix("$2b$05$") }, "--bcrypt-cost: \(hashes)")
            let added = try await program.run([
                "--server", url, "add", "--name", "Grace Hopper", "--email", "work:grace@example.org",
                "--phone", "mobile:+1 555 0100",
            ])
            #expect(added.status == 0, "\(added.error)")
            let json = try await program.run(["--server", url, "list", "--json"])
            let contacts = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]]
            #expect(contacts?.first?["name"] as? String == "Grace Hopper")

            // Signup generated a passphrase; `account passphrase` prints it, and only it, for another machine.
            let shown = try await program.run(["--server", url, "account", "passphrase"])
            #expect(shown.status == 0, "\(shown.error)")
            let passphrase = shown.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(passphrase.count == 35 && !passphrase.contains("\n"), "printed: \(shown.output)")
            var laptop = program
            laptop.environment["CONTACTS_PASSPHRASE"] = passphrase
            let signin = try await laptop.run([
                "--server", url, "--device", "laptop", "account", "signin", "--username", "grace",
            ])
            #expect(signin.status == 0, "\(signin.error)")
            let onLaptop = try await laptop.run(["--server", url, "--device", "laptop", "list"])
            #expect(onLaptop.output.contains("Grace Hopper"), "\(onLaptop.output)")
            var stranger = program
            stranger.environment["CONTACTS_PASSPHRASE"] = "not the passphrase at all"
            let refused = try await stranger.run([
                "--server", url, "--device", "phone", "account", "signin", "--username", "grace",
            ])
            #expect(refused.status != 0)
            #expect(refused.error.contains("passphrase does not open"), "\(refused.error)")
            let phoneStatus = try await stranger.run(["--server", url, "--device", "phone", "account", "status"])
            #expect(phoneStatus.output.contains("not signed in"), "\(phoneStatus.output)")
            // A sync without a session fails and says how to sign in; it does not report a sync that did nothing.
            let unsigned = try await stranger.run(["--server", url, "--device", "phone", "sync"])
            #expect(unsigned.status != 0)
            #expect(
                unsigned.error.contains("not signed in to \(url)")
                    && unsigned.error.contains("--device phone account signin"), "\(unsigned.error)")
            #expect(!unsigned.output.contains("synced"), "\(unsigned.output)")
            // So does an edit's sync: the edit is kept, and is said not to be synced.
            let unsignedEdit = try await stranger.run([
                "--server", url, "--device", "phone", "add", "--name", "Kept Offline",
            ])
            #expect(unsignedEdit.status == 0, "\(unsignedEdit.error)")
            #expect(
                unsignedEdit.error.contains("not synced yet (1 change(s) pending): not signed in to \(url)")
                    && unsignedEdit.error.contains("--device phone account signin"), "\(unsignedEdit.error)")
            let never = try await stranger.run(["--server", url, "--device", "phone", "status"])
            #expect(never.output.contains("last sync:  never"), "\(never.output)")

            // The server goes away: the edit is kept, and the sync says so and fails.
            server.stop()
            let id = added.output.trimmingCharacters(in: .whitespacesAndNewlines)
            let edited = try await program.run(["--server", url, "edit", id, "--org", "Navy"])
            #expect(edited.status == 0)
            #expect(edited.error.contains("not synced yet"))
            let sync = try await program.run(["--server", url, "sync"])
            #expect(sync.status != 0)
            #expect(
                sync.error.contains(
                    "sync failed: networkFailure: could not reach the sync server at \(url): nothing listens there (connection refused); 1 change waits on this device for the next sync"
                ),
                "\(sync.error)")
            let status = try await program.run(["--server", url, "status", "--json"])
            let report = try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any]
            #expect(report?["pendingChanges"] as? Int == 1)
            #expect((report?["lastError"] as? String)?.isEmpty == false)
        }
    }

    @Test("import reports a bad card with its line and imports the rest; export writes vCards")
    func importExport() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            // A command that syncs starts the zero-setup server: it must not outlive the test.
            defer { program.stopLocalServer() }
            let file = directory + "/in.vcf"
            try
                "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Zoë\r\nEND:VCARD\r\nBEGIN:VCARD\r\nVERSION:3.0\r\nbroken\r\nEND:VCARD\r\nBEGIN:VCARD\r\nVERSION:4.0\r\nFN:张伟\r\nEND:VCARD\r\n"
                .write(toFile: file, atomically: true, encoding: .utf8)
            let imported = try await program.run(["import", file, "--no-sync"])
            #expect(imported.status == 0)
            #expect(imported.output.contains("imported 2"))
            #expect(imported.error.contains("line 7"))
            let exported = try await program.run(["export"])
            #expect(exported.output.components(separatedBy: "BEGIN:VCARD").count == 3)
            #expect(exported.output.contains("FN:Zoë") && exported.output.contains("FN:张伟"))
        }
    }

    @Test("every command explains itself with --help")
    func help() async throws {
        let program = ContactsProgram(dataDirectory: NSTemporaryDirectory())
        let commands = [
            [], ["list"], ["add"], ["edit"], ["delete"], ["sync"], ["status"], ["import"], ["export"], ["account"],
            ["wipe"], ["query"], ["add-from-mail"], ["book"], ["book", "share"], ["book", "accept"],
            ["book", "unshare"],
            ["book", "leave"], ["book", "rotate-key"],
        ]
        for command in commands {
            let result = try await program.run(command + ["--help"])
            #expect(result.status == 0)
            #expect(result.output.contains("USAGE"), "\(command)")
        }
    }

    @Test("query for mutt and aerc: every word matches, case and accents aside; phone digits; exit 1 for nothing")
    func query() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            // A command that syncs starts the zero-setup server: it must not outlive the test.
            defer { program.stopLocalServer() }
            for arguments in [
                ["--name", "Łukasz Nowak", "--email", "lukasz@example.pl", "--email", "work:l.nowak@firma.example"],
                ["--name", "Ada Lovelace", "--email", "ada@example.org", "--org", "Analytical Engines"],
                ["--name", "Grace Hopper", "--phone", "+1 (555) 010-0199"],
            ] {
                #expect(try await program.run(["add", "--no-sync"] + arguments).status == 0)
            }
            let mutt = try await program.run(["query", "lukasz"])
            #expect(mutt.status == 0)
            #expect(
                mutt.output
                    == "2 address(es) match 'lukasz':\nlukasz@example.pl\tŁukasz Nowak\t\nl.nowak@firma.example\tŁukasz Nowak\t\n"
            )
            let words = try await program.run(["query", "ENGINES ada", "--format", "aerc"])
            #expect(words.output == "ada@example.org\tAda Lovelace\n")
            // Grace matches by her phone's digits, but has no address to give.
            let none = try await program.run(["query", "5550100199"])
            #expect(none.status == 1)
            #expect(none.output == "No address matches '5550100199'.\n")
            #expect(try await program.run(["query", "nobody", "--format", "aerc"]).output == "")
            #expect(try await program.run(["query", "nobody", "--format", "aerc"]).status == 1)
        }
    }

    @Test(
        "add-from-mail adds the sender of a piped message once, names an unnamed contact, refuses a message without From:"
    )
    func addFromMail() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            // A command that syncs starts the zero-setup server: it must not outlive the test.
            defer { program.stopLocalServer() }
            let message =
                "Subject: hi\r\nFrom: =?UTF-8?B?xYF1a2FzeiBOb3dhaw==?= <lukasz@example.pl>\r\n\r\n"
                + String(repeating: "a long body line\r\n", count: 20_000)
            let added = try await program.run(["add-from-mail", "--no-sync"], input: message)
            #expect(added.status == 0, "\(added.error)")
            #expect(added.output.hasPrefix("added Łukasz Nowak <lukasz@example.pl> "))
            let again = try await program.run(["add-from-mail", "--no-sync"], input: message)
            #expect(again.output.hasPrefix("already there: Łukasz Nowak"))
            #expect(
                try await program.run([
                    "add", "--name", "grace@example.org", "--email", "grace@example.org", "--no-sync",
                ]).status == 0)
            let named = try await program.run(
                ["add-from-mail", "--no-sync"], input: "From: Grace Hopper <GRACE@example.org>\n\nhello\n")
            #expect(named.output.hasPrefix("named Grace Hopper"))
            let listed = try await program.run(["list"])
            #expect(listed.output.split(separator: "\n").count == 2)
            let refused = try await program.run(["add-from-mail", "--no-sync"], input: "Subject: no sender\n\nbody\n")
            #expect(refused.status != 0 && refused.error.contains("no From: header"))
        }
    }

    @Test("import a folder of vCards and CSV; a dry run shows adds, updates and skips and changes nothing")
    func importFolderAndDryRun() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            // A command that syncs starts the zero-setup server: it must not outlive the test.
            defer { program.stopLocalServer() }
            let folder = directory + "/exports"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try
                "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:urn:uuid:5E1F3C2A-0000-4000-8000-0000000000AB\r\nFN:Ada Lovelace\r\nEND:VCARD\r\n"
                .write(toFile: folder + "/a.vcf", atomically: true, encoding: .utf8)
            try "First Name,Last Name,E-mail 1 - Value\nGrace,Hopper,grace@example.org\nBad,Row,nope\n"
                .write(toFile: folder + "/google.csv", atomically: true, encoding: .utf8)
            try "not contacts".write(toFile: folder + "/readme.txt", atomically: true, encoding: .utf8)

            let dry = try await program.run(["import", folder, "--dry-run"])
            #expect(dry.status == 0, "\(dry.error)")
            #expect(dry.output.contains("add Ada Lovelace\n") && dry.output.contains("add Grace Hopper\n"))
            #expect(dry.output.contains("skip \(folder)/google.csv: line 3:"))
            #expect(dry.output.hasSuffix("would import 2, update 0, skip 1; nothing changed\n"))
            #expect(try await program.run(["list"]).output.contains("No contacts"))

            let imported = try await program.run(["import", folder, "--no-sync"])
            #expect(imported.output == "imported 2, updated 0, skipped 1\n")
            // The same exports again: the vCard by its UID, the CSV row by its email.
            let again = try await program.run(["import", folder, "--dry-run"])
            #expect(again.output.contains("update Ada Lovelace\n") && again.output.contains("update Grace Hopper\n"))
            let reimported = try await program.run(["import", folder, "--no-sync"])
            #expect(reimported.output == "imported 0, updated 2, skipped 1\n")
            #expect(try await program.run(["list"]).output.split(separator: "\n").count == 2)
        }
    }

    @Test("books offline: create, add to, list and export one book; mistakes explained, nothing changed")
    func books() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            // A command that syncs starts the zero-setup server: it must not outlive the test.
            defer { program.stopLocalServer() }
            #expect(try await program.run(["book", "create", "Family", "--no-sync"]).status == 0)
            #expect(try await program.run(["add", "--book", "family", "--name", "Mum", "--no-sync"]).status == 0)
            #expect(try await program.run(["add", "--name", "Alan", "--no-sync"]).status == 0)
            let books = try await program.run(["book", "list"])
            #expect(books.output == "Contacts\t1 contact\tyours\towner\t\nFamily\t1 contact\tyours\towner\t\n")
            let family = try await program.run(["list", "--book", "Family"])
            #expect(family.output.contains("Mum") && !family.output.contains("Alan"))
            let exported = try await program.run(["export", "--book", "Family"])
            #expect(exported.output.contains("FN:Mum") && !exported.output.contains("FN:Alan"))
            let shown = try await program.run(["show", String(family.output.prefix(8))])
            #expect(shown.output.contains("Book:         Family"))

            let cases: [([String], String)] = [
                (["add", "--book", "Friends", "--name", "X", "--no-sync"], "no book named \"Friends\""),
                (["book", "create", "family", "--no-sync"], "a book named \"family\" already"),
                (["book", "create", " ", "--no-sync"], "a book's name is 1 to 100 characters"),
                (["book", "delete", "Contacts", "--yes", "--no-sync"], "the default book cannot be deleted"),
                (["book", "delete", "Family", "--no-sync"], "run again with --yes"),
                (["book", "leave", "Family", "--no-sync"], "is your own book"),
            ]
            for (arguments, message) in cases {
                let result = try await program.run(arguments)
                #expect(result.status != 0, "\(arguments)")
                #expect(result.error.contains(message), "\(arguments): \(result.error)")
            }
            #expect(try await program.run(["book", "list"]).output == books.output, "nothing changed")
            #expect(try await program.run(["status"]).output.contains("books:      2\n"))
            let deleted = try await program.run(["book", "delete", "Family", "--yes", "--no-sync"])
            #expect(deleted.output == "deleted \"Family\" and its 1 contact(s)\n")
            #expect(try await program.run(["list"]).output.contains("Alan"))
            #expect(!(try await program.run(["list"]).output.contains("Mum")))
        }
    }
}
