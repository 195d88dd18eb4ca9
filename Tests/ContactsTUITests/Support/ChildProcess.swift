import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A program the end-to-end tests start: the sync server, or a `contacts` command. Spawned with an empty
/// signal mask and default signal actions (Swift Testing's threads block most signals, and Foundation's
/// `Process` would pass that on), so that SIGTERM stops it; its output goes to a log file.
struct ChildProcess {
    let pid: pid_t
    let log: String

    /// Starts `arguments[0]` with `arguments`, `environment` added to this process's.
    init(_ arguments: [String], environment: [String: String] = [:], log: String) throws {
        let spawnAttributes = SpawnAttributes()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of this process: an inherited socket of another test's server would stay open
        // as long as this child lives, and that server could not see its connections close.
        addCloseFrom(&actions, 3)
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, &spawnAttributes.attributes, argv, envp)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .ENOENT) }
        self.pid = pid
        self.log = log
    }

    /// Runs a command to its end; returns its exit status. Waits on a thread of its own: a test that
    /// blocked one of the few threads Swift concurrency has would hold up every test running beside it.
    static func run(_ arguments: [String], environment: [String: String] = [:], log: String) async throws -> Int32 {
        let process = try ChildProcess(arguments, environment: environment, log: log)
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: process.wait()) }
        }
    }

    /// Waits for the process to end; its exit status, or 128 + the signal that ended it.
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Asks the process to stop (SIGTERM), kills it if it has not after `grace` seconds, and reaps it.
    func stop(grace: Double = 10) {
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        var status: Int32 = 0
        while Date() < deadline {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped < 0 && errno == ECHILD) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// Whether something accepts connections on the loopback `port`.
    static func isListening(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
