import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// `sync-server admin accounts usage` and `set-quota`, run as the built program against a real
/// storage (a SQLite file, and a PostgreSQL database when the tests have one), and what the server
/// then does with the quota they set.
@Suite("sync-server's quota options, admin accounts usage and set-quota")
struct AdminQuotaCommandTests {
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ServerCommandTests.run(["admin", "accounts"] + arguments)
    }

    @Test("usage lists each account's bytes; set-quota sets, lifts and resets a quota the server then enforces")
    func usageAndSetQuota() async throws {
        for backend in OnEveryBackend.backends {
            let path = TemporaryFiles.path("admin", extension: "sqlite")
            var storage: [String] = []
            defer {
                TemporaryFiles.removeSQLite(path)
            }
            try await TestServer.$backend.withValue(backend) {
                // Ada stores 600 bytes of fields; Grace nothing.
                var stored: Int64 = 0
                let server = try await TestServer.start(storagePath: path, transport: .inProcess)
                storage = try server.storageArguments()
                do {
                    let ada = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
                    _ = try await TestClient(baseURL: server.baseURL).signedUp(username: "grace")
                    try await ada.saveZones("Contacts")
                    var note = RecordValue(recordType: "Note", recordID: .init(recordName: "n", zoneID: contactsZone))
                    note["text"] = .string(String(repeating: "x", count: 600 - 35))
                    try await ada.save([note])
                    stored = Int64(FieldCoding.encode(note.fields).count)
                    try await server.stop()
                } catch {
                    try? await server.stop()
                    throw error
                }

                let usage = try await Self.run(["usage"] + storage)
                #expect(usage.status == 0, "\(usage.output)")
                let lines = usage.output.split(separator: "\n").map(String.init)
                #expect(lines.first?.hasPrefix("USER") == true, "\(usage.output)")
                #expect(
                    lines.contains { $0.hasPrefix("ada ") && $0.contains(ByteCount.describe(stored)) },
                    "\(usage.output)")
                #expect(lines.contains { $0.hasPrefix("grace ") && $0.contains("0 bytes") && $0.contains("default") })

                let set = try await Self.run(["set-quota", "ADA", "1KiB"] + storage)
                #expect(set.status == 0, "\(set.output)")
                #expect(set.output.contains("ada: quota 1 KiB (1,024 bytes)"), "\(set.output)")
                let unlimited = try await Self.run(["set-quota", "grace", "unlimited"] + storage)
                #expect(unlimited.output.contains("grace: quota unlimited"), "\(unlimited.output)")
                let one = try await Self.run(["usage", "grace"] + storage)
                #expect(
                    one.output.split(separator: "\n").count == 2 && one.output.contains("unlimited"), "\(one.output)")

                // The server enforces the quota the command set: 600 stored, 500 more would pass 1,024.
                let restarted = try await TestServer.start(storagePath: path, transport: .inProcess)
                do {
                    let ada = try await TestClient(baseURL: restarted.baseURL).signedIn(username: "ada")
                    var more = RecordValue(recordType: "Note", recordID: .init(recordName: "m", zoneID: contactsZone))
                    more["text"] = .string(String(repeating: "y", count: 500))
                    let refused = await syncError { try await ada.save([more]) }
                    #expect(refused?.code == .quotaExceeded)
                    #expect(refused?.quota == StorageUsage(usedBytes: stored, limitBytes: 1_024))
                    try await restarted.stop()
                } catch {
                    try? await restarted.stop()
                    throw error
                }

                let reset = try await Self.run(["set-quota", "ada", "default"] + storage)
                #expect(reset.output.contains("ada: quota default"), "\(reset.output)")
            }
            if backend == .postgres { try await TestPostgres.dropDatabase(TestPostgres.databaseName(for: path)) }
        }
    }

    @Test(
        "mistakes are refused saying what is wrong: an unknown account, a quota that is not one, a missing file",
        arguments: [
            (["usage", "nobody"], "there is no account named 'nobody'"),
            (["set-quota", "nobody", "5GiB"], "there is no account named 'nobody'"),
            (["set-quota", "ada", "0"], "write 'unlimited' for no limit"),
            (["set-quota", "ada", "lots"], "'lots' is not a quota"),
            (["set-quota", "ada", "99999999999TiB"], "is not a quota"),
        ])
    func mistakes(_ arguments: [String], _ expected: String) async throws {
        let path = TemporaryFiles.path("admin", extension: "sqlite")
        defer { TemporaryFiles.removeSQLite(path) }
        _ = try SQLiteRecordStore(path: path)
        let (status, output) = try await Self.run(arguments + ["--storage", path])
        #expect(status != 0, "\(arguments) was accepted: \(output)")
        #expect(output.contains(expected), "\(output)")
    }

    @Test("--quota-bytes and --max-push-sockets-per-account reach the server; values no server could use are refused")
    func serverOptions() async throws {
        let server = try await ServerProcess.start(
            executable: ServerCommandTests.path,
            arguments: ["--quota-bytes", "1KiB", "--max-push-sockets-per-account", "1"])
        defer { server.stop() }
        let ada = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
        #expect(try await ada.call(.get, "/v1/account/usage") == StorageUsage(usedBytes: 0, limitBytes: 1_024))
        try await ada.saveZones("Contacts")
        var note = RecordValue(recordType: "Note", recordID: .init(recordName: "n", zoneID: contactsZone))
        note["text"] = .string(String(repeating: "x", count: 2_000))
        #expect(await syncError { try await ada.save([note]) }?.code == .quotaExceeded)
        let socket = try await ada.openPush()
        defer { socket.close() }
        let port = try #require(URLComponents(string: server.baseURL)?.port)
        let second = try await RawHTTP.exchange(
            port: port, "GET", "/v1/push",
            headers: HTTPStatusTests.upgradeHeaders + [("Authorization", "Bearer \(try #require(ada.token))")])
        #expect(second.status == 413 && second.error?.code == .limitExceeded)

        for (arguments, option) in [
            (["--quota-bytes", "lots"], "--quota-bytes"),
            (["--max-push-sockets-per-account", "0"], "--max-push-sockets-per-account"),
        ] {
            let (status, output) = try await ServerCommandTests.run(arguments + ["--port", "0"])
            #expect(status != 0, "\(arguments) was accepted: \(output)")
            #expect(output.contains(option), "\(output)")
        }
    }

    @Test("a storage file that does not exist is not created: the command says to pass the server's")
    func missingFile() async throws {
        let path = TemporaryFiles.path("admin", extension: "sqlite")
        let (status, output) = try await Self.run(["usage", "--storage", path])
        #expect(status != 0)
        #expect(output.contains("there is no storage file at \(path)"), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
