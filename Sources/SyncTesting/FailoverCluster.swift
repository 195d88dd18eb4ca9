import Foundation
import LocalSystem

/// A PostgreSQL cluster of a test's own that fails over by itself: a pg_auto_failover monitor, a primary
/// and a synchronous standby, started by `Scripts/with-postgres-ha --start` (the script CI and the docs
/// use), so that a test can kill its primary without touching the PostgreSQL the other tests share.
///
/// ```swift
/// let cluster = try await FailoverCluster.start()
/// defer { cluster.remove() }
/// try await TestPostgres.$override.withValue(cluster.url) { … }
/// try await cluster.control("kill-primary")
/// ```
public final class FailoverCluster: Sendable {
    /// The address of its maintenance database, naming both nodes as libpq does.
    public let url: String
    /// The script that acts on it (see `Scripts/with-postgres-ha`).
    private let ctl: String

    private init(url: String, ctl: String) {
        (self.url, self.ctl) = (url, ctl)
    }

    /// The script, from this file's place in the package.
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/with-postgres-ha").path
    }

    /// Starts a cluster on three unused ports; fails, saying what to install, when pg_auto_failover is missing.
    public static func start() async throws -> FailoverCluster {
        var base = try LoopbackPort.unused()
        for _ in 0..<20 where LoopbackPort.isListening(base + 1) || LoopbackPort.isListening(base + 2) {
            base = try LoopbackPort.unused()
        }
        let outcome = try await ChildProcess.run(
            [script, "--start"], environment: ["SYNC_TEST_POSTGRES_PORT": String(base)])
        var values: [String: String] = [:]
        for line in outcome.output.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        guard outcome.status == 0, let url = values["SYNC_TEST_POSTGRES_URL"],
            let ctl = values["SYNC_TEST_POSTGRES_HA_CTL"]
        else {
            throw ChildProcessError(
                description:
                    "Scripts/with-postgres-ha --start failed (\(outcome.status)): \(outcome.error.suffix(3_000))")
        }
        return FailoverCluster(url: url, ctl: ctl)
    }

    /// Runs one of the cluster's commands (`kill-primary`, `wait-writable`, `rejoin`, `wait-healthy`,
    /// `switchover`, `primary`, `state`); returns what it printed, or throws with it when it fails.
    @discardableResult
    public func control(_ command: String) async throws -> String {
        let outcome = try await ChildProcess.run([ctl, command])
        guard outcome.status == 0 else {
            throw ChildProcessError(
                description: "the cluster's \(command) failed (\(outcome.status)): \(outcome.output)\(outcome.error)")
        }
        return outcome.output
    }

    /// Stops every process of the cluster and removes its directory.
    public func remove() {
        _ = try? ChildProcess.runBlocking([ctl, "remove"])
    }
}
