import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server of a test's own, for a test that stops and starts PostgreSQL itself: the
/// shared one of ``TestPostgres`` serves every other test running beside it. Built with the same
/// programs as `Scripts/with-postgres` (Debian's `postgresql` package), as the postgres user when the
/// tests run as root, since `initdb` refuses root.
///
/// ```swift
/// let cluster = try await PostgresCluster.start()
/// defer { cluster.remove() }
/// try await TestPostgres.$override.withValue(cluster.url) { … }
/// ```
public final class PostgresCluster: Sendable {
    /// The port it listens on (127.0.0.1).
    public let port: Int
    /// Its data directory, log and socket live in this directory, removed by ``remove()``.
    public let directory: String
    private let bin: String

    /// The address of its maintenance database, in the shape `SYNC_TEST_POSTGRES_URL` has.
    public var url: String { "postgres://postgres@127.0.0.1:\(port)/postgres?sslmode=disable" }

    private init(port: Int, directory: String, bin: String) {
        (self.port, self.directory, self.bin) = (port, directory, bin)
    }

    /// Creates a cluster in a new directory and starts it.
    public static func start() async throws -> PostgresCluster {
        let bin = try programs()
        var template = Array("/tmp/sync-test-postgres.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ChildProcessError(description: "could not make a directory: \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: made)
        chmod(directory, 0o755)
        let cluster = PostgresCluster(port: try LoopbackPort.unused(), directory: directory, bin: bin)
        do {
            if getuid() == 0 {
                try await cluster.run(["/bin/chown", "postgres:", directory], as: false)
            }
            try await cluster.run(["\(bin)/initdb", "-D", "\(directory)/data", "-A", "trust", "-U", "postgres"])
            try await cluster.startServer()
        } catch {
            cluster.remove()
            throw error
        }
        return cluster
    }

    /// Starts the server again after ``stop()``, and returns once it takes connections.
    public func startServer() async throws {
        try await run([
            "\(bin)/pg_ctl", "-D", "\(directory)/data", "-w", "-t", "120", "-l", "\(directory)/log", "-o",
            "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            "start",
        ])
    }

    /// Stops the server as an administrator restarting it would (`pg_ctl stop -m fast`: every session
    /// is ended, open transactions are rolled back, what was committed stays).
    public func stop() async throws {
        try await run(["\(bin)/pg_ctl", "-D", "\(directory)/data", "-w", "-t", "120", "-m", "fast", "stop"])
    }

    /// Stops the server at once and removes its directory.
    public func remove() {
        _ = try? ChildProcess.runBlocking(
            command(["\(bin)/pg_ctl", "-D", "\(directory)/data", "-m", "immediate", "stop"], as: true))
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The directory with PostgreSQL's programs: the newest of Debian's.
    private static func programs() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        guard
            let newest = versions.compactMap(Int.init).sorted().last,
            FileManager.default.isExecutableFile(atPath: "\(root)/\(newest)/bin/initdb")
        else {
            throw ChildProcessError(
                description:
                    "PostgreSQL is not installed (no \(root)/*/bin/initdb); install it: apt-get install postgresql")
        }
        return "\(root)/\(newest)/bin"
    }

    /// Runs one of PostgreSQL's programs; fails with what it printed if it fails.
    private func run(_ arguments: [String], as postgres: Bool = true) async throws {
        let outcome = try await ChildProcess.run(command(arguments, as: postgres))
        guard outcome.status == 0 else {
            let log = (try? String(contentsOfFile: "\(directory)/log", encoding: .utf8)) ?? ""
            throw ChildProcessError(
                description: "\(arguments.joined(separator: " ")) failed (\(outcome.status)): "
                    + "\(outcome.output)\(outcome.error)\n\(log.suffix(2_000))")
        }
    }

    /// `arguments` as the postgres user when this process is root (PostgreSQL refuses to run as root).
    private func command(_ arguments: [String], as postgres: Bool) -> [String] {
        guard postgres && getuid() == 0 else { return arguments }
        let quoted = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        return ["/bin/su", "postgres", "-s", "/bin/sh", "-c", quoted.joined(separator: " ")]
    }
}
