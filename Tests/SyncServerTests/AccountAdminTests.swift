import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// `sync-server admin accounts …`, the built program, run by an operator against the storage of a
/// server that is running: what it changes holds at the account's next request.
@Suite("sync-server admin accounts", .onEveryBackend)
struct AccountAdminTests {
    /// Runs `sync-server admin accounts <arguments>` on the storage of `server`.
    static func admin(_ arguments: [String], on server: TestServer) async throws -> (status: Int32, output: String) {
        try await ServerCommandTests.run(["admin", "accounts"] + arguments + server.storageArguments())
    }

    @Test(
        "a disabled account is refused at every request, push and sign-in with accountDisabled; enabling restores its sessions"
    )
    func disableAndEnable() async throws {
        try await withServer(transport: .loopback) { server, anonymous in
            let accounts = AccountClient(serverURL: try #require(URL(string: server.baseURL)))
            let ada = try await anonymous.signedUp(username: "ada")
            let grace = try await anonymous.signedUp(username: "grace")
            let socket = try await ada.openPush()
            try await ada.saveZones("Contacts")

            let disabled = try await Self.admin(["disable", "ada"], on: server)
            #expect(disabled.status == 0, "\(disabled.output)")
            #expect(disabled.output.contains("disabled ada"))

            let refused = try await ada.send(.get, "/v1/account")
            #expect(refused.status == 401 && refused.error?.reason == .accountDisabled)
            #expect(refused.error?.message.contains("operator disabled") == true)
            let push = try await RawHTTP.exchange(
                port: server.port, "GET", "/v1/push",
                headers: HTTPStatusTests.upgradeHeaders + [("Authorization", "Bearer \(try #require(ada.token))")])
            #expect(push.status == 401 && push.error?.reason == .accountDisabled)
            if server.backend == .postgres {
                // Instances on PostgreSQL hear the command and close the account's open sockets.
                try await waitUntil("the disabled account's push socket closes") { socket.isClosed }
            }
            let signIn = await syncError {
                _ = try await accounts.signIn(username: "ada", password: "correct horse battery")
            }
            #expect(signIn?.reason == .accountDisabled)
            // Without the password, nothing tells a guesser the account is disabled.
            let guess = await syncError { _ = try await accounts.signIn(username: "ada", password: "a wrong guess") }
            #expect(guess?.code == .notAuthenticated && guess?.reason == nil)
            #expect(try await grace.account().username == "grace")

            let list = try await Self.admin(["list"], on: server)
            #expect(list.status == 0, "\(list.output)")
            let lines = list.output.split(separator: "\n").map {
                $0.split(separator: " ", omittingEmptySubsequences: true)
            }
            // Over clusters (SYNC_TEST_CLUSTERS), each account's cluster is a sixth column.
            let clustered = server.store is ClusteredRecordStore
            #expect(
                lines.first.map { $0.joined(separator: " ") }
                    == "USERNAME USER RECORD NAME CREATED SESSIONS DISABLED" + (clustered ? " CLUSTER" : ""))
            let adaRow = try #require(lines.first { $0.first == "ada" })
            let adaID = try #require(try await server.store.account(username: "ada")).userRecordName
            #expect(adaRow.count == (clustered ? 6 : 5) && adaRow[1] == Substring(adaID))
            #expect(adaRow[3] == "1" && adaRow[4] == "yes", "\(list.output)")
            #expect(lines.first { $0.first == "grace" }?[4] == "no")

            let enabled = try await Self.admin(["enable", "ada"], on: server)
            #expect(enabled.status == 0, "\(enabled.output)")
            #expect(try await ada.account().username == "ada")
            #expect(try await ada.listZones().map(\.zoneID.zoneName) == ["Contacts"])
            socket.close()
        }
    }

    @Test("delete asks for --yes, names an account that does not exist, and deletes as the owner would")
    func delete() async throws {
        try await withServer { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")

            let unconfirmed = try await Self.admin(["delete", "ada"], on: server)
            #expect(unconfirmed.status != 0 && unconfirmed.output.contains("--yes"), "\(unconfirmed.output)")
            #expect(try await ada.listZones().count == 1)
            let missing = try await Self.admin(["delete", "nobody", "--yes"], on: server)
            #expect(missing.status != 0 && missing.output.contains("no account named 'nobody'"), "\(missing.output)")

            let deleted = try await Self.admin(["delete", "ada", "--yes"], on: server)
            #expect(deleted.status == 0, "\(deleted.output)")
            #expect(deleted.output.contains("deleted ada: 1 zone(s)"), "\(deleted.output)")
            let refused = try await ada.send(.get, "/v1/account")
            #expect(refused.status == 401 && refused.error?.reason == .accountDeleted)
            #expect(try await server.store.account(username: "ada") == nil)
        }
    }
}

@Suite("sync-server admin accounts: help and storage")
struct AccountAdminHelpTests {
    @Test("--help names each subcommand and where the storage is given")
    func help() async throws {
        let group = try await ServerCommandTests.run(["admin", "accounts", "--help"])
        #expect(group.status == 0)
        for word in ["list", "disable", "enable", "delete", "accountDisabled"] {
            #expect(group.output.contains(word), "\(word) missing from:\n\(group.output)")
        }
        let list = try await ServerCommandTests.run(["admin", "accounts", "list", "--help"])
        #expect(list.output.contains("--storage <file>") && list.output.contains("--database <url>"), "\(list.output)")
        let delete = try await ServerCommandTests.run(["admin", "accounts", "delete", "--help"])
        #expect(delete.output.contains("--yes") && delete.output.contains("no undo"), "\(delete.output)")
    }

    @Test("a storage file that does not exist is refused, naming --storage, and not created")
    func missingStorage() async throws {
        let path = TemporaryFiles.path("absent", extension: "sqlite")
        let outcome = try await ServerCommandTests.run(["admin", "accounts", "list", "--storage", path])
        #expect(outcome.status != 0 && outcome.output.contains("no storage file at \(path)"), "\(outcome.output)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

/// `sync-server admin … --config FILE`: the storage the server's own configuration file names, as the
/// package's service reads it.
@Suite("sync-server admin --config")
struct AdminConfigurationFileTests {
    @Test("the admin commands use the storage the server's configuration file names, its other settings aside")
    func storageFromTheConfigurationFile() async throws {
        try await withServer(transport: .loopback) { server, anonymous in
            _ = try await anonymous.signedUp(username: "ada")
            let directory = URL(fileURLWithPath: TemporaryFiles.path("admin-config"))
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let config = directory.appendingPathComponent("sync-server.conf").path
            try "# as the package ships it\nstorage = \(server.storagePath)\nhost = 127.0.0.1\nport = 8080\n".write(
                toFile: config, atomically: true, encoding: .utf8)

            let list = try await ServerCommandTests.run(["admin", "accounts", "list", "--config", config])
            #expect(list.status == 0, "\(list.output)")
            #expect(list.output.contains("ada"), "\(list.output)")

            // --storage wins over the file.
            let elsewhere = directory.appendingPathComponent("absent.sqlite").path
            let explicit = try await ServerCommandTests.run([
                "admin", "accounts", "list", "--config", config, "--storage", elsewhere,
            ])
            #expect(explicit.status != 0 && explicit.output.contains("no storage file at \(elsewhere)"), "\(explicit)")

            // A file that names no storage, or both, or a bad line, is said so and nothing opens.
            for (text, words) in [
                ("port = 8080\n", "sets neither storage nor database"),
                ("storage = /x.sqlite\ndatabase = postgres://u@h/d\n", "sets both storage and database"),
                ("storage /x.sqlite\n", "line 1: expected 'name = value'"),
            ] {
                try text.write(toFile: config, atomically: true, encoding: .utf8)
                let refused = try await ServerCommandTests.run(["admin", "accounts", "list", "--config", config])
                #expect(refused.status != 0 && refused.output.contains(words), "\(text): \(refused.output)")
            }
        }
    }
}
