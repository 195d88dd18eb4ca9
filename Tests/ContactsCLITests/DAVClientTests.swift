import ContactsLocal
import ContactsTesting
import Foundation
import LocalSystem
import SyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `contacts dav` with the DAV clients terminal users run (Debian's vdirsyncer and khard), through the
/// built program and its zero-setup server: a local vdir synced with the bridge, edits, deletions and a
/// conflict on each side, a second book, and khard's edit reaching another device.
@Suite(
    "contacts dav: vdirsyncer and khard", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct DAVClientTests {
    /// A client program's path; the test fails (it does not skip) when it is not installed.
    static func tool(_ name: String) throws -> String {
        let path = "/usr/bin/" + name
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ToolMissing(description: "\(name) is not installed: `apt install \(name)` (.ci/run installs it)")
        }
        return path
    }

    struct ToolMissing: Error, CustomStringConvertible { var description: String }

    /// The URL a starting `contacts dav` says it serves at, in its log.
    static func listeningURL(log: String, of bridge: ChildProcess) async throws -> String {
        try #require(
            try await announcement(
                #"https?://127\.0\.0\.1:\d+/"#, inLog: log, of: bridge, what: "the bridge says where it listens"),
            "the bridge stopped as it started: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }

    /// The bridge's password, as `contacts dav --show-credentials` prints it.
    static func password(_ program: ContactsProgram) async throws -> String {
        let shown = try await program.run(["dav", "--show-credentials"]).output
        return String(
            try #require(shown.split(separator: "\n").first { $0.hasPrefix("password:") }?.split(separator: " ").last))
    }

    /// A running `contacts dav` and a vdirsyncer configured for it.
    struct Setup {
        let program: ContactsProgram
        let directory: String
        let bridge: ChildProcess
        let vdirsyncer: String
        let config: String
        let port: String
        let password: String
        var vdir: String { directory + "/vdir" }

        func sync() async throws -> ChildProcess.Outcome {
            try await ChildProcess.run([vdirsyncer, "-c", config, "sync"])
        }

        /// The vdir's cards of `book` (its folder), by file name.
        func cards(_ book: String) throws -> [String: String] {
            let folder = vdir + "/" + book
            var cards: [String: String] = [:]
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            where name.hasSuffix(".vcf") {
                cards[name] = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            }
            return cards
        }

        func file(of book: String, containing text: String) throws -> String? {
            try cards(book).first { $0.value.contains(text) }.map { vdir + "/" + book + "/" + $0.key }
        }

        /// What the laptop device has after a sync: `contacts list --json` names and `show` of each.
        func laptop(_ arguments: [String]) async throws -> ChildProcess.Outcome {
            try await program.run(["--device", "laptop"] + arguments)
        }
    }

    static func withBridge(_ body: (Setup) async throws -> Void) async throws {
        let vdirsyncer = try tool("vdirsyncer")
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            defer { program.stopLocalServer() }
            for arguments in [
                ["add", "--name", "Ada Lovelace", "--email", "ada@example.org", "--no-sync"],
                ["add", "--name", "Alan Turing", "--phone", "+44 20 7946 0000", "--no-sync"],
                ["book", "create", "Family"],
                ["add", "--name", "Mum", "--book", "Family", "--no-sync"],
                ["add", "--name", "Dad", "--book", "Family", "--no-sync"],
                ["sync"],
            ] {
                let run = try await program.run(["--device", "laptop"] + arguments)
                #expect(run.status == 0, "\(arguments): \(run.error)")
            }
            let log = directory + "/dav.log"
            let bridge = try ChildProcess(
                [ContactsProgram.path, "--data-dir", directory, "dav", "--listen", "127.0.0.1:0"], output: .file(log))
            defer {
                kill(bridge.pid, SIGTERM)
                _ = bridge.wait()
            }
            let url = try await Self.listeningURL(log: log, of: bridge)
            let port = String(url.dropFirst("http://127.0.0.1:".count).dropLast())
            let password = try await Self.password(program)
            let config = directory + "/vdirsyncer.conf"
            try """
            [general]
            status_path = "\(directory)/status/"

            [pair contacts]
            a = "local"
            b = "bridge"
            collections = ["from b"]
            conflict_resolution = ["command", "\(ContactsProgram.path)", "dav", "merge"]

            [storage local]
            type = "filesystem"
            path = "\(directory)/vdir/"
            fileext = ".vcf"

            [storage bridge]
            type = "carddav"
            url = "http://127.0.0.1:\(port)/"
            username = "contacts"
            password = "\(password)"
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let discover = try await ChildProcess.run(
                [vdirsyncer, "-c", config, "discover"], input: String(repeating: "y\n", count: 10))
            #expect(discover.status == 0, "\(discover.output) \(discover.error)")
            try await body(
                Setup(
                    program: program, directory: directory, bridge: bridge, vdirsyncer: vdirsyncer, config: config,
                    port: port, password: password))
        }
    }

    @Test(
        "vdirsyncer: first download of both books, an edit and a deletion on each side, a conflict merged without loss")
    func vdirsyncer() async throws {
        try await Self.withBridge { setup in
            var run = try await setup.sync()
            #expect(run.status == 0, "\(run.output) \(run.error)")
            let contacts = try setup.cards("Contacts")
            #expect(contacts.count == 2 && contacts.values.contains { $0.contains("FN:Ada Lovelace") })
            let folders = try FileManager.default.contentsOfDirectory(atPath: setup.vdir).sorted()
            #expect(folders.count == 2 && folders.contains("Contacts"), "\(folders)")
            let family = try #require(folders.first { $0 != "Contacts" })
            #expect(try setup.cards(family).values.filter { $0.contains("FN:Mum") || $0.contains("FN:Dad") }.count == 2)

            // The vdir's side: an edit and a deletion reach the laptop.
            let adaFile = try #require(try setup.file(of: "Contacts", containing: "Ada Lovelace"))
            let ada = try String(contentsOfFile: adaFile, encoding: .utf8)
            try ada.replacingOccurrences(of: "END:VCARD", with: "TEL;TYPE=cell:+1 555 0100\r\nEND:VCARD")
                .write(toFile: adaFile, atomically: true, encoding: .utf8)
            let alanFile = try #require(try setup.file(of: "Contacts", containing: "Alan Turing"))
            try FileManager.default.removeItem(atPath: alanFile)
            run = try await setup.sync()
            #expect(run.status == 0, "\(run.output) \(run.error)")
            try await waitUntil("the vdir's edit and deletion are on the laptop") {
                _ = try await setup.laptop(["sync"])
                let list = try await setup.laptop(["list"]).output
                return list.contains("+1 555 0100") && !list.contains("Alan Turing")
            } observed: {
                (try? await setup.laptop(["list"]).output) ?? ""
            }

            // The laptop's side: an edit and a deletion reach the vdir.
            let listed = try await setup.laptop(["list", "--json"]).output
            let entries = try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]] ?? []
            let adaID = try #require(entries.first { $0["name"] as? String == "Ada Lovelace" }?["id"] as? String)
            run = try await setup.laptop(["edit", adaID, "--org", "Analytical Engines"])
            #expect(run.status == 0, "\(run.error)")
            run = try await setup.laptop(["add", "--name", "Grace Hopper"])
            #expect(run.status == 0, "\(run.error)")
            let mumID =
                try #require(
                    try JSONSerialization.jsonObject(
                        with: Data(try await setup.laptop(["list", "--json"]).output.utf8))
                        as? [[String: Any]]
                ).first { $0["name"] as? String == "Mum" }?["id"] as? String
            run = try await setup.laptop(["delete", try #require(mumID)])
            #expect(run.status == 0, "\(run.error)")
            try await waitUntil("the laptop's edit, addition and deletion are in the vdir") {
                _ = try await setup.sync()
                return try setup.file(of: "Contacts", containing: "ORG:Analytical Engines") != nil
                    && setup.file(of: "Contacts", containing: "Grace Hopper") != nil
                    && setup.cards(family).values.map { $0.contains("FN:Dad") } == [true]
            } observed: {
                let sync = try? await setup.sync()
                return
                    "\((try? setup.cards("Contacts").values.sorted()) ?? []) \((try? setup.cards(family)) ?? [:]); vdirsyncer: \(sync?.output ?? "") \(sync?.error ?? "")"
            }

            // Both sides edit Ada: the vdir a note, the laptop her email. vdirsyncer sees a conflict and
            // `contacts dav merge` keeps both.
            let before = try String(
                contentsOfFile: try #require(try setup.file(of: "Contacts", containing: "Ada")), encoding: .utf8)
            run = try await setup.laptop(["edit", adaID, "--clear-emails", "--email", "ada@analytical.example"])
            #expect(run.status == 0, "\(run.error)")
            // Wait until the bridge has the laptop's edit (vdirsyncer would otherwise see no conflict).
            try await waitUntil("the bridge has the laptop's email") {
                let outcome = try await ChildProcess.run([
                    try Self.tool("curl"), "-s", "-u", "contacts:\(setup.password)",
                    "http://127.0.0.1:\(setup.port)/books/Contacts/\(adaID).vcf",
                ])
                return outcome.output.contains("ada@analytical.example")
            } observed: {
                let shown = (try? await setup.laptop(["show", adaID]).output) ?? ""
                let served = try? await ChildProcess.run([
                    try Self.tool("curl"), "-s", "-u", "contacts:\(setup.password)",
                    "http://127.0.0.1:\(setup.port)/books/Contacts/\(adaID).vcf",
                ])
                return "the laptop shows \(shown); the bridge serves \(served?.output ?? "")"
            }
            let adaNow = try #require(try setup.file(of: "Contacts", containing: "Ada"))
            try before.replacingOccurrences(of: "END:VCARD", with: "NOTE:met at the Royal Society\r\nEND:VCARD")
                .write(toFile: adaNow, atomically: true, encoding: .utf8)
            run = try await setup.sync()
            #expect(run.status == 0, "\(run.output) \(run.error)")
            let merged = try String(contentsOfFile: adaNow, encoding: .utf8)
            #expect(
                merged.contains("ada@analytical.example") && merged.contains("met at the Royal Society"), "\(merged)")
            try await waitUntil("the merged card is on the laptop") {
                _ = try await setup.laptop(["sync"])
                let shown = try await setup.laptop(["show", adaID]).output
                return shown.contains("ada@analytical.example") && shown.contains("met at the Royal Society")
            } observed: {
                (try? await setup.laptop(["show", adaID]).output) ?? ""
            }
        }
    }

    @Test("khard lists and shows the vdir's contacts, and its edit reaches another contacts device")
    func khard() async throws {
        let khard = try Self.tool("khard")
        try await Self.withBridge { setup in
            #expect(try await setup.sync().status == 0)
            let editor = setup.directory + "/editor.sh"
            try "#!/bin/sh\nsed -i 's/ada@example.org/ada@khard.example/' \"$1\"\n"
                .write(toFile: editor, atomically: true, encoding: .utf8)
            chmod(editor, 0o700)
            let config = setup.directory + "/khard.conf"
            try """
            [addressbooks]
            [[contacts]]
            path = \(setup.vdir)/Contacts/

            [general]
            editor = \(editor)
            merge_editor = \(editor)
            default_action = list

            [contact table]
            display = formatted_name
            """.write(toFile: config, atomically: true, encoding: .utf8)
            var run = try await ChildProcess.run([khard, "-c", config, "list"])
            #expect(
                run.status == 0 && run.output.contains("Ada Lovelace") && run.output.contains("Alan Turing"),
                "\(run.output) \(run.error)")
            // Searched by the family name: khard matches every field, UIDs included, and "Ada" is also in
            // the hex of one random UID in about 140 ("…-4ADA-…"); khard then asks which contact and reads
            // its answer from an empty stdin for ever.
            run = try await ChildProcess.run([khard, "-c", config, "show", "Lovelace"])
            #expect(run.output.contains("ada@example.org"), "\(run.output) \(run.error)")
            run = try await ChildProcess.run([khard, "-c", config, "edit", "Lovelace"])
            #expect(run.status == 0, "\(run.output) \(run.error)")
            #expect(try setup.file(of: "Contacts", containing: "ada@khard.example") != nil)
            run = try await setup.sync()
            #expect(run.status == 0, "\(run.output) \(run.error)")
            try await waitUntil("khard's edit is on the laptop") {
                _ = try await setup.laptop(["sync"])
                return try await setup.laptop(["list"]).output.contains("ada@khard.example")
            } observed: {
                (try? await setup.laptop(["list"]).output) ?? ""
            }
        }
    }

    @Test("TLS: served over https with the certificate given; an address beyond loopback refused without one")
    func tls() async throws {
        let openssl = try Self.tool("openssl")
        let curl = try Self.tool("curl")
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            defer { program.stopLocalServer() }
            let refused = try await program.run(["dav", "--listen", "0.0.0.0:0"])
            #expect(refused.status != 0 && refused.error.contains("--tls-certificate"), "\(refused.error)")
            let half = try await program.run(["dav", "--tls-certificate", directory + "/cert.pem"])
            #expect(half.status != 0 && half.error.contains("go together"), "\(half.error)")

            let made = try await ChildProcess.run([
                openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem", "-days", "2", "-subj",
                "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
            ])
            try #require(made.status == 0, "openssl: \(made.error)")
            let log = directory + "/dav.log"
            let bridge = try ChildProcess(
                [
                    ContactsProgram.path, "--data-dir", directory, "dav", "--listen", "127.0.0.1:0",
                    "--tls-certificate", directory + "/cert.pem", "--tls-key", directory + "/key.pem",
                ], output: .file(log))
            defer {
                kill(bridge.pid, SIGTERM)
                _ = bridge.wait()
            }
            let url = try await Self.listeningURL(log: log, of: bridge)
            let password = try await Self.password(program)
            let secure = try await ChildProcess.run([
                curl, "-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", directory + "/cert.pem", "-u",
                "contacts:\(password)", "-X", "PROPFIND", "-H", "Depth: 1", url + "books/",
            ])
            #expect(secure.output == "207", "\(secure.output) \(secure.error)")
            let plain = try await ChildProcess.run([
                curl, "-s", "-o", "/dev/null", "-w", "%{http_code}", "-u", "contacts:\(password)",
                url.replacingOccurrences(of: "https://", with: "http://") + "books/",
            ])
            #expect(plain.output != "207" && plain.output != "200", "plain http answered \(plain.output)")
        }
    }
}
