import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `sync-server` program running as a child process on a free loopback port, storing into a
/// throw-away directory, or into a PostgreSQL database when given one: for benchmarks that measure
/// the server alone and tests that kill it.
public final class ServerProcess: Sendable {
    private let process: ChildProcess
    private let directory: URL
    public let baseURL: String
    /// Its log (standard output and error).
    public let log: String
    public var pid: pid_t { process.pid }

    /// Starts the server with cheap password hashing and no effective rate limit, and waits until it
    /// listens (it says where in its log).
    public init(executable: String, database: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-server-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        log = directory.appendingPathComponent("server.log").path
        // --log-level notice: the "listening" line below is logged at that level.
        let storage =
            database.map { ["--database", $0] } ?? [
                "--storage", directory.appendingPathComponent("server.sqlite").path,
            ]
        process = try ChildProcess(
            [executable] + storage + [
                "--port", "0", "--bcrypt-cost", "4", "--rate-limit", "100000", "--log-level", "notice",
            ], output: .file(log))
        var seen = ""
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline && process.isRunning {
            seen = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let range = seen.range(of: #"listening on http://127\.0\.0\.1:\d+"#, options: .regularExpression) {
                baseURL = "http://127.0.0.1:" + seen[range].split(separator: ":").last!
                return
            }
            usleep(20_000)
        }
        process.stop()
        try? FileManager.default.removeItem(at: directory)
        throw ChildProcessError(description: "sync-server did not start within 60 s; its log: \(seen)")
    }

    /// Stops the server gracefully and removes its storage.
    public func stop() {
        process.terminate(SIGINT)
        process.wait()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Kills the server at once (SIGKILL), as a crash or an out-of-memory kill would, and reaps it.
    public func kill() {
        process.terminate(SIGKILL)
        process.wait()
    }
}
