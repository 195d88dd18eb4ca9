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

    /// The bytes of its SQLite storage on disk (the file and its log); nil when it stores in PostgreSQL.
    public var storageBytes: Int64? {
        let file = Self.storageFile(in: directory)
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        return [file, file + "-wal"].reduce(0) { total, path in
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            return total + ((attributes?[.size] as? NSNumber)?.int64Value ?? 0)
        }
    }

    /// Where a server started by ``start(executable:database:arguments:)`` without a database stores.
    private static func storageFile(in directory: URL) -> String {
        directory.appendingPathComponent("server.sqlite").path
    }

    private init(process: ChildProcess, directory: URL, baseURL: String, log: String) {
        self.process = process
        self.directory = directory
        self.baseURL = baseURL
        self.log = log
    }

    /// Starts the server with cheap password hashing, no effective rate limit and `arguments` after
    /// those, and waits until it listens (it says where in its log).
    public static func start(executable: String, database: String? = nil, arguments: [String] = []) async throws
        -> ServerProcess
    {
        // --log-level notice: the "listening" line is logged at that level.
        try await start(named: "sync-server") { directory in
            [executable]
                + (database.map { ["--database", $0] } ?? [
                    "--storage", storageFile(in: directory),
                ]) + [
                    "--port", "0", "--bcrypt-cost", "4", "--rate-limit", "100000", "--log-level", "notice",
                ] + arguments
        }
    }

    /// Starts any program that says `listening on http://127.0.0.1:PORT` in its output once it listens (a
    /// benchmark's reference server, say), with a throw-away directory of its own, and waits for that line.
    /// - Parameter command: the program and its arguments, given the directory.
    public static func start(named name: String, command: (URL) -> [String]) async throws -> ServerProcess {
        let directory = URL(fileURLWithPath: TemporaryFiles.path(name))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let log = directory.appendingPathComponent("server.log").path
        let process = try ChildProcess(command(directory), output: .file(log))
        let announced: String?
        do {
            announced = try await announcement(
                #"listening on http://127\.0\.0\.1:\d+"#, inLog: log, of: process,
                what: "\(name) says where it listens")
        } catch {
            process.stop()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        guard let port = announced?.split(separator: ":").last else {
            let printed = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: directory)
            throw ChildProcessError(description: "\(name) stopped as it started; its log: \(printed)")
        }
        return ServerProcess(process: process, directory: directory, baseURL: "http://127.0.0.1:\(port)", log: log)
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
