import Foundation
import SyncTesting

#if canImport(Glibc)
    import Glibc
#endif

/// The built `sync-server` running as a process of its own, with its log in a file, for tests of
/// what it listens on.
final class ServerProgram: Sendable {
    let process: ChildProcess
    let log: String

    static let path = ServerCommandTests.path

    /// Starts `sync-server` with cheap password hashing and `arguments`, and waits until its log
    /// holds every one of `waitFor` (or it exits).
    init(_ arguments: [String], log: String, waitFor: [String]) async throws {
        self.log = log
        process = try ChildProcess(
            [Self.path, "--bcrypt-cost", "4", "--rate-limit", "100000", "--log-level", "notice"] + arguments,
            output: .file(log))
        do {
            try await waitUntil("sync-server logs \(waitFor)", poll: .milliseconds(20)) {
                let text = self.printed
                return waitFor.allSatisfy(text.contains) || !process.isRunning
            } observed: {
                self.printed
            }
        } catch {
            process.stop()
            throw error
        }
        guard process.isRunning else {
            throw TestFailure("sync-server stopped as it started; its log: \(printed)")
        }
    }

    /// Everything it logged so far.
    var printed: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// The port it said it listens on at `scheme://127.0.0.1:…`.
    func port(_ scheme: String = "http") -> Int? {
        let text = printed
        return text.range(of: "listening on \(scheme)://127\\.0\\.0\\.1:\\d+", options: .regularExpression).flatMap {
            Int(text[$0].split(separator: ":").last!)
        }
    }

    /// The TCP ports the process listens on, from /proc: its socket descriptors, matched with the
    /// kernel's tables of listening TCP sockets.
    var listeningTCPPorts: [Int] {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.pid)/fd")) ?? []
        let inodes = Set(
            descriptors.compactMap { descriptor -> String? in
                let target = try? FileManager.default.destinationOfSymbolicLink(
                    atPath: "/proc/\(process.pid)/fd/\(descriptor)")
                guard let target, target.hasPrefix("socket:[") else { return nil }
                return String(target.dropFirst(8).dropLast())
            })
        var ports: [Int] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = (try? String(contentsOfFile: table, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                // local_address is field 1 (address:port in hex), st field 3 (0A = LISTEN), inode field 9.
                guard fields.count > 9, fields[3] == "0A", inodes.contains(String(fields[9])),
                    let port = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) })
                else { continue }
                ports.append(port)
            }
        }
        return ports
    }

    /// Stops it gracefully (SIGTERM) and waits; returns its exit status. A server that has not ended
    /// after two minutes is killed (137): the grace is generous because a whole suite on two cores can
    /// slow a stop that takes milliseconds alone by a hundred times (CI saw a 10 s grace run out).
    @discardableResult
    func stop() -> Int32 {
        process.stop(grace: .seconds(120))
        return process.wait().status
    }
}

/// A test's own failure, with what it saw.
struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
