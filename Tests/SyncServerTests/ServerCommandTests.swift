import Foundation
import SyncCore
import SyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built `sync-server` program: its HTTP limits are options a person can see and set.
@Suite("sync-server's options and its configuration file")
struct ServerCommandTests {
    static let path = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("sync-server").path

    /// Runs the program to its end; returns its exit status and everything it printed.
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try #require(FileManager.default.isExecutableFile(atPath: path), "build sync-server first: swift build")
        let outcome = try await ChildProcess.run([path] + arguments)
        return (outcome.status, outcome.output + outcome.error)
    }

    @Test("--help shows every HTTP limit with its default")
    func help() async throws {
        let (status, output) = try await Self.run(["--help"])
        #expect(status == 0)
        for (option, defaultValue) in [
            ("--request-head-timeout <seconds>", "15.0"), ("--idle-timeout <seconds>", "75.0"),
            ("--request-body-timeout <seconds>", "60.0"), ("--max-header-bytes <bytes>", "16384"),
            ("--max-request-bytes <bytes>", "2097152"), ("--asset-max-bytes <bytes>", "52428800"),
            ("--max-connections <n>", "512"),
            ("--max-connections-per-address <n>", "64"),
        ] {
            let start = try #require(output.range(of: option), "\(option) is not in --help:\n\(output)")
            // The default closes the option's help, before the next option.
            let rest = output[start.upperBound...]
            let help = rest[..<(rest.range(of: "\n  --")?.lowerBound ?? rest.endIndex)]
            let flat = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(flat.contains("(default: \(defaultValue))"), "\(option): \(flat)")
        }
    }

    @Test(
        "a value no server could run with is refused, naming the option",
        arguments: [
            (["--request-head-timeout", "0"], "--request-head-timeout"),
            (["--idle-timeout", "nan"], "--idle-timeout"),
            (["--request-body-timeout", "1e300"], "--request-body-timeout"),
            (["--max-header-bytes", "10"], "--max-header-bytes"),
            (["--max-request-bytes", "1000"], "--max-request-bytes"),
            (["--asset-max-bytes", "0"], "--asset-max-bytes"),
            (["--max-connections", "0"], "--max-connections"),
            (["--max-connections", "10", "--max-connections-per-address", "11"], "--max-connections-per-address"),
        ])
    func refusedValues(_ arguments: [String], _ option: String) async throws {
        let directory = URL(fileURLWithPath: TemporaryFiles.path("sync-cli"))
        defer { try? FileManager.default.removeItem(at: directory) }
        let (status, output) = try await Self.run(
            arguments + ["--port", "0", "--storage", directory.appendingPathComponent("s.sqlite").path])
        #expect(status != 0, "\(arguments) was accepted: \(output)")
        #expect(output.contains(option), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: directory.path), "nothing is created for a refused setting")
    }

    @Test("the options reach the server: connections per address, head size and body limit")
    func optionsReachTheServer() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.path), "build sync-server first: swift build")
        // Each far from its default, so that only the option explains what follows.
        let server = try await ServerProcess.start(
            executable: Self.path,
            arguments: [
                "--max-connections-per-address", "1", "--max-header-bytes", "2048", "--max-request-bytes", "1200000",
                "--asset-max-bytes", "7000000",
            ])
        defer { server.stop() }
        let port = try #require(URLComponents(string: server.baseURL)?.port)

        // One connection per address: a second one from the same address is closed unanswered.
        let first = try await RawConnection.open(port: port, from: "127.0.0.2")
        try await first.send("GET /v1/limits HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let limits = try await first.response()
        #expect(limits.status == 200)
        #expect(String(decoding: limits.body, as: UTF8.self).contains(#""maximumRequestBytes":1200000"#))
        #expect(String(decoding: limits.body, as: UTF8.self).contains(#""maximumAssetBytes":7000000"#))
        let second = try await RawConnection.open(port: port, from: "127.0.0.2")
        try? await second.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let refused = await second.readUntilEnded()
        #expect(refused.wasEnded && refused.bytes.isEmpty, "\(refused)")

        // A head of 4 KiB is over the 2 KiB set.
        let big = try await RawConnection.open(port: port, from: "127.0.0.3")
        try await big.send(
            "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: \(String(repeating: "a", count: 4096))\r\n\r\n")
        #expect(try await big.response().status == 431)
    }

    @Test("a configuration file sets the options; an option on the command line wins over it")
    func configurationFile() async throws {
        let directory = URL(fileURLWithPath: TemporaryFiles.path("sync-config"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("sync-server.conf").path
        // A port no server could take: only the command line's --port 0 lets it start.
        try """
        # the settings of one instance
        max-request-bytes = 1200000
        port = "70000"

        max-header-bytes=2048
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let server = try await ServerProcess.start(executable: Self.path, arguments: ["--config", file])
        defer { server.stop() }
        let port = try #require(URLComponents(string: server.baseURL)?.port)
        let connection = try await RawConnection.open(port: port)
        try await connection.send("GET /v1/limits HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let limits = try await connection.response()
        #expect(String(decoding: limits.body, as: UTF8.self).contains(#""maximumRequestBytes":1200000"#))
        let big = try await RawConnection.open(port: port)
        try await big.send(
            "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: \(String(repeating: "a", count: 4096))\r\n\r\n")
        #expect(try await big.response().status == 431, "max-header-bytes from the file")
    }

    @Test(
        "a configuration file it cannot use is refused, naming the file and line, and nothing is created",
        arguments: [
            ("prot = 8080\n", "line 1: 'prot' is not a setting"),
            ("# ok\nport = 1\nport = 2\n", "line 3: 'port' is already set on line 2"),
            ("port 8080\n", "line 1: expected 'name = value'"),
            ("port =\n", "line 1: 'port' has no value"),
            ("config = other.conf\n", "line 1: 'config' is not a setting"),
        ])
    func refusedConfigurationFile(_ text: String, _ message: String) async throws {
        let directory = URL(fileURLWithPath: TemporaryFiles.path("sync-config"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("sync-server.conf").path
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let storage = directory.appendingPathComponent("s.sqlite").path
        let (status, output) = try await Self.run(["--config", file, "--storage", storage, "--port", "0"])
        #expect(status != 0, "\(text) was accepted: \(output)")
        #expect(output.contains("\(file) \(message)"), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: storage), "nothing is created for a refused file")

        let (missingStatus, missing) = try await Self.run(["--config", file + ".missing", "--storage", storage])
        #expect(missingStatus != 0)
        #expect(
            missing.contains("cannot read the configuration file \(file).missing: there is no such file"), "\(missing)")
    }

    @Test("a storage directory other users can write in is refused, naming the fix; nothing is created in it")
    func storageDirectoryChecked() async throws {
        for mode in [0o777, 0o770, 0o722] {
            let directory = TemporaryFiles.path("sync-dir")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // Set after creating: the umask would take the group and others' write bits away.
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: directory)
            let (status, output) = try await Self.run(["--port", "0", "--storage", directory + "/s.sqlite"])
            #expect(status != 0, "mode \(String(mode, radix: 8)) was accepted: \(output)")
            #expect(output.contains("run chmod 700 \(directory)"), "\(output)")
            #expect(!FileManager.default.fileExists(atPath: directory + "/s.sqlite"))
        }
    }

    @Test("admin rotate-token-key: a new key signs; with --grace-days 0 tokens of the old key are refused")
    func rotateTokenKey() async throws {
        let directory = TemporaryFiles.path("sync-keys")
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = directory + "/s.sqlite"
        let keyID = { (token: ServerChangeToken) in token.data.dropFirst().prefix(4).reduce(0) { $0 << 8 | Int($1) } }

        var server = try await ServerProgram(
            ["--storage", storage, "--port", "0"], log: directory + "/one.log", waitFor: ["listening on http://"])
        var ada = try await TestClient(baseURL: "http://127.0.0.1:\(try #require(server.port()))").signedUp(
            username: "ada")
        let old = try await ada.fetchDatabaseChanges().changeToken
        #expect(keyID(old) == 1)
        server.stop()

        let (status, output) = try await Self.run([
            "admin", "rotate-token-key", "--storage", storage, "--grace-days", "0",
        ])
        #expect(status == 0, "\(output)")
        #expect(output.contains("key 2 signs change tokens from now on"), "\(output)")

        server = try await ServerProgram(
            ["--storage", storage, "--port", "0"], log: directory + "/two.log", waitFor: ["listening on http://"])
        defer { server.stop() }
        ada.baseURL = "http://127.0.0.1:\(try #require(server.port()))"
        let refused = await syncError { _ = try await ada.fetchDatabaseChanges(since: old) }
        #expect(
            refused?.code == .changeTokenExpired && refused?.reason == .changeTokenInvalid,
            "\(String(describing: refused))")
        #expect(keyID(try await ada.fetchDatabaseChanges().changeToken) == 2)

        let (both, bothOutput) = try await Self.run([
            "admin", "rotate-token-key", "--storage", storage, "--database-url", "postgres://x@localhost/x",
        ])
        #expect(both != 0 && bothOutput.contains("exclude each other"), "\(bothOutput)")
        let (missing, missingOutput) = try await Self.run([
            "admin", "rotate-token-key", "--storage", directory + "/none.sqlite",
        ])
        #expect(missing != 0 && missingOutput.contains("there is no storage file"), "\(missingOutput)")
    }
}
