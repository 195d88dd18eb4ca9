import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncTesting
import Testing

/// A household's server with a certificate of its own making, as the README sets it up: `contacts` trusts
/// it through `--ca-file` (or `SYNCKIT_CA_FILE`), and refuses it without.
@Suite(
    "contacts against a TLS server with a CA of its own", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct TLSClientCommandTests {
    @Test(
        "--ca-file: signup, an edit and a second device over https; without it, refused; plain http off the machine refused"
    )
    func householdServer() async throws {
        try await withTemporaryDirectory { directory in
            let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(
                toFile: directory + "/san.cnf", atomically: true, encoding: .utf8)
            for command in [
                ["req", "-x509"] + ec + [
                    "-keyout", directory + "/ca.key", "-out", directory + "/ca.pem", "-days", "2", "-subj",
                    "/CN=Home CA",
                ],
                ["req"] + ec + [
                    "-keyout", directory + "/server.key", "-out", directory + "/server.csr", "-subj", "/CN=localhost",
                ],
                [
                    "x509", "-req", "-in", directory + "/server.csr", "-CA", directory + "/ca.pem", "-CAkey",
                    directory + "/ca.key", "-CAcreateserial", "-out", directory + "/server.pem", "-days", "2",
                    "-extfile", directory + "/san.cnf",
                ],
            ] {
                let outcome = try await ChildProcess.run(["/usr/bin/openssl"] + command)
                try #require(outcome.status == 0, "openssl \(command): \(outcome.error)")
            }
            let port = try LoopbackPort.unused()
            let serverProgram = URL(fileURLWithPath: ContactsProgram.path).deletingLastPathComponent()
                .appendingPathComponent("sync-server").path
            let server = try ChildProcess(
                [
                    serverProgram, "--storage", directory + "/srv/server.sqlite", "--port", String(port),
                    "--tls-certificate", directory + "/server.pem", "--tls-key", directory + "/server.key",
                    "--bcrypt-cost", "4",
                ], output: .file(directory + "/server.log"))
            defer { server.stop() }
            try await waitUntil("the TLS server listens on port \(port)", poll: .milliseconds(50)) {
                LoopbackPort.isListening(port)
            } observed: {
                (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? "no log"
            }

            var program = ContactsProgram(dataDirectory: directory + "/data")
            program.environment["CONTACTS_PASSWORD"] = "correct horse battery"
            program.environment["CONTACTS_PASSPHRASE"] = "orbit maple quiet lantern"
            let server443 = ["--server", "https://localhost:\(port)"]
            let trusted = server443 + ["--ca-file", directory + "/ca.pem"]

            let untrusted = try await program.run(server443 + ["account", "signup", "--username", "ada"])
            #expect(untrusted.status != 0, "a certificate nobody vouches for is refused: \(untrusted.output)")
            #expect(
                untrusted.error.contains(
                    "the TLS handshake failed: the server's certificate is not one this machine trusts"),
                "\(untrusted.error)")

            let signup = try await program.run(trusted + ["account", "signup", "--username", "ada"])
            #expect(signup.status == 0, "\(signup.error)")
            #expect(try await program.run(trusted + ["add", "--name", "Ada Lovelace"]).status == 0)
            var laptop = program
            laptop.environment["SYNCKIT_CA_FILE"] = directory + "/ca.pem"
            let signin = try await laptop.run(
                server443 + ["--device", "laptop", "account", "signin", "--username", "ada"])
            #expect(signin.status == 0, "SYNCKIT_CA_FILE is enough: \(signin.error)")
            let listed = try await laptop.run(server443 + ["--device", "laptop", "list"])
            #expect(listed.output.contains("Ada Lovelace"), "\(listed.output) \(listed.error)")

            // Plain http to a machine that is not this one: refused before anything is sent.
            let plain = try await program.run(
                ["--server", "http://sync.invalid:8080", "--device", "other", "account", "signin", "--username", "ada"])
            #expect(plain.status != 0)
            #expect(plain.error.contains("refusing to send a password or token over plain http://"), "\(plain.error)")
        }
    }
}
