import ContactsStore
import ContactsTesting
import Foundation
import LocalSystem
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// `--version` of every program, and what `contacts` says of a server older than it needs.
@Suite("Versions on the command line")
struct VersionCommandTests {
    /// The commit the test's sources are at, as the BuildCommit plugin writes it; nil outside a git checkout.
    static var checkoutCommit: String? {
        get async throws {
            let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().path
            let outcome = try await ChildProcess.run(["/usr/bin/git", "-C", package, "rev-parse", "--short=12", "HEAD"])
            return outcome.status == 0 ? outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) : nil
        }
    }

    @Test("contacts, sync-server and sync-bench --version print the release and the commit they were built from")
    func versionOfEveryProgram() async throws {
        let commit = try await Self.checkoutCommit
        for program in ["contacts", "sync-server", "sync-bench"] {
            let path = URL(fileURLWithPath: ContactsProgram.path).deletingLastPathComponent().appendingPathComponent(
                program
            ).path
            let outcome = try await ChildProcess.run([path, "--version"])
            #expect(outcome.status == 0, "\(program): \(outcome.error)")
            let line = outcome.output.trimmingCharacters(in: .newlines)
            #expect(line.hasPrefix("\(program) \(SyncRelease.version)"), "\(line)")
            if let commit {
                // Built from this checkout: its commit, with "-modified" when tracked files differ from it.
                #expect(line.hasPrefix("\(program) \(SyncRelease.version) (commit \(commit)"), "\(line)")
            }
            #expect(!line.contains("\n"), "one line: \(line)")
        }
    }

    @Test("contacts on an older server warns once per command on stderr, and its commands still work")
    func olderServerWarning() async throws {
        var configuration = SyncServerConfiguration.testing
        configuration.version = ReleaseVersion(0, 2, 0)
        try await TestServer.with(configuration: configuration, transport: .loopback) { server in
            try await withTemporaryDirectory { directory in
                var program = ContactsProgram(dataDirectory: directory)
                program.environment["CONTACTS_PASSWORD"] = "a long enough password"
                let url = server.baseURL
                let signup = try await program.run(["--server", url, "account", "signup", "--username", "grace"])
                #expect(signup.status == 0, "\(signup.error)")
                // Each command that reaches the server says it once.
                for arguments in [["sync"], ["add", "--name", "Grace Hopper"], ["sync", "--fetch"]] {
                    let outcome = try await program.run(["--server", url] + arguments)
                    #expect(outcome.status == 0, "\(arguments): \(outcome.error)")
                    let warnings = outcome.error.split(separator: "\n").filter { $0.contains("warning:") }
                    #expect(warnings.count == 1, "\(arguments): \(outcome.error)")
                    #expect(
                        warnings.first?.hasPrefix(
                            "contacts: warning: the server at \(url) runs sync-server 0.2.0; contact photos") == true,
                        "\(outcome.error)")
                    #expect(
                        outcome.error.contains("ask whoever runs it to upgrade it"), "says what to do: \(outcome.error)"
                    )
                }
                // One that reads this device alone does not ask.
                let list = try await program.run(["--server", url, "list"])
                #expect(list.status == 0 && list.output.contains("Grace Hopper") && list.error.isEmpty, "\(list)")
            }
        }
    }
}
