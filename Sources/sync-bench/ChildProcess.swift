import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a command as a child process and reports what a user would time: its wall time, its exit
/// status, what it printed, and its peak resident memory (from `wait4`'s resource usage, which
/// Foundation's `Process` does not give).
enum ChildProcess {
    struct Result {
        var status: Int32
        var seconds: Double
        var peakKiB: Int
        var output: String
    }

    /// Runs `executable` with `arguments`, this process's environment plus `environment`, and
    /// standard output and error both into `outputFile`.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String], outputFile: URL)
        throws -> Result
    {
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile.path, O_WRONLY | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        let environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }

        let start = ContinuousClock.now
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: executable])
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) == -1 && errno == EINTR {}
        let elapsed = ContinuousClock.now - start
        let output = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        // WEXITSTATUS, or 128 + the signal that ended it.
        let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: exitStatus, seconds: elapsed.inSeconds, peakKiB: usage.ru_maxrss, output: output)
    }
}
