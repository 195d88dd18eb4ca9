import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A program this project's programs start: the local sync server that `contacts` leaves running, the person's
/// editor on the terminal, and what tests and benchmarks start (the sync server, a `contacts` command, tmux).
/// The one process launcher of the project.
///
/// Hand-written on `posix_spawn`, not swift-subprocess, whose `run` is structured: it waits for the child
/// to end before it returns, and reaps it itself. The local server must outlive the command that started it
/// (``startDetached(_:log:)``), tests stop and kill their servers from synchronous code and check whether
/// they still run, and benchmarks read a child's peak memory from `wait4`, which a reaped child no longer has.
///
/// Not Foundation's `Process`, for three reasons. Its `run()` reads past a buffer's end when it lists the
/// descriptors to close (AddressSanitizer reports a heap overflow in `findMaximumOpenFromProcSelfFD`, and a
/// loaded test run crashed there). It passes on the spawning thread's signal mask, and the threads Swift
/// Testing runs tests on block most signals, so a server started that way would never see SIGTERM or
/// SIGINT. And it gives no peak memory, which `wait4` does. So this spawns with `posix_spawn`, an empty
/// signal mask, default signal actions, and no descriptor of this process but the three it is given.
public final class ChildProcess: Sendable {
    /// Where the child's standard output or error goes.
    public enum Destination: Sendable {
        /// Nowhere (/dev/null).
        case null
        /// Appended to a file, created if it does not exist.
        case file(String)
        /// Standard error only: wherever standard output goes.
        case standardOutput
        /// This process's own (its terminal, for an editor).
        case inherited
    }

    /// Where the child's standard input comes from.
    public enum Source: Sendable {
        /// Nothing (/dev/null).
        case null
        /// This process's own standard input (its terminal, for an editor).
        case inherited
    }

    /// How a child ended.
    public struct Termination: Sendable {
        /// Its exit status, or 128 + the signal that ended it.
        public var status: Int32
        /// Its peak resident memory, in KiB (from `wait4`).
        public var peakResidentKiB: Int
        /// The CPU time it used, user and system, in seconds (from `wait4`).
        public var cpuSeconds: Double
    }

    /// What a command run to its end with `run(_:environment:input:)` did.
    public struct Outcome: Sendable {
        public var status: Int32
        public var output: String
        public var error: String

        public init(status: Int32, output: String, error: String) {
            (self.status, self.output, self.error) = (status, output, error)
        }
    }

    public let pid: pid_t
    private let termination = Mutex<Termination?>(nil)

    /// Starts `arguments[0]` with `arguments`, and this process's environment with `environment` laid over
    /// it (a nil value removes the variable). Its standard input is /dev/null unless `input` says otherwise.
    public convenience init(
        _ arguments: [String], environment: [String: String?] = [:], input: Source = .null,
        output: Destination = .null, error: Destination = .standardOutput
    ) throws {
        try self.init(
            arguments, environment: environment, input: input == .inherited ? 0 : nil, output: output,
            error: error, pipes: nil)
    }

    private init(
        _ arguments: [String], environment: [String: String?], input: Int32?, output: Destination,
        error: Destination, pipes: (output: Int32, error: Int32)?
    ) throws {
        precondition(!arguments.isEmpty, "a command needs at least the program's path")
        let attributes = SpawnAttributes()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch input {
        case 0?: break  // this process's own, as it is
        case let input?: posix_spawn_file_actions_adddup2(&actions, input, 0)
        case nil: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        for (descriptor, destination, pipe) in [(Int32(1), output, pipes?.output), (2, error, pipes?.error)] {
            if let pipe {
                posix_spawn_file_actions_adddup2(&actions, pipe, descriptor)
                continue
            }
            switch destination {
            case .null: posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            case .standardOutput: posix_spawn_file_actions_adddup2(&actions, 1, descriptor)
            case .inherited: break
            }
        }
        // Nothing else of this process: a child that outlives its test (a server, tmux) would keep the sockets
        // of other tests' servers open, and those servers would never see their connections close.
        addCloseFrom(&actions, 3)

        var merged = ProcessInfo.processInfo.environment
        for (name, value) in environment { merged[name] = value }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, &attributes.attributes, argv, envp)
        guard result == 0 else {
            throw ChildProcessError(
                description: "could not start \(arguments[0]): \(String(cString: strerror(result)))")
        }
        self.pid = pid
    }

    /// Starts a program that outlives this process (the local sync server): its standard input is /dev/null,
    /// its output and errors are appended to `log` (created 0600). This process reaps it if it ends first
    /// (``reapDetached()``), so that a long-lived app that starts it again collects no zombies.
    ///
    /// Leaving this process's session is the program's to do (`setsid` as it starts): it knows when it is
    /// ready to, and a terminal closed before then stops it, as the person would expect.
    public static func startDetached(_ arguments: [String], log: String) throws -> ChildProcess {
        let process = try ChildProcess(arguments, output: .file(log))
        detached.withLock { $0.append(process) }
        return process
    }

    /// Reaps the programs started with ``startDetached(_:log:)`` that have ended since.
    public static func reapDetached() {
        detached.withLock { $0.removeAll { !$0.isRunning } }
    }

    /// Detached programs this process started and has not reaped.
    private static let detached = Mutex<[ChildProcess]>([])

    /// Runs a command to its end, with `input` on its standard input; returns its status and what it wrote to
    /// standard output and standard error. Waits on threads of its own: a test that blocked one of the few
    /// threads Swift concurrency has would hold up every test running beside it.
    public static func run(
        _ arguments: [String], environment: [String: String?] = [:], input: String? = nil
    ) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result { try runBlocking(arguments, environment: environment, input: input) })
            }
        }
    }

    /// Runs a command to its end, its output going to `output`; returns how it ended.
    public static func run(
        _ arguments: [String], environment: [String: String?] = [:], output: Destination,
        error: Destination = .standardOutput
    ) async throws -> Termination {
        let process = try ChildProcess(arguments, environment: environment, output: output, error: error)
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: process.wait()) }
        }
    }

    /// `run(_:environment:input:)` on the calling thread, for callers that are not async.
    public static func runBlocking(
        _ arguments: [String], environment: [String: String?] = [:], input: String? = nil
    ) throws -> Outcome {
        Self.ignoreBrokenPipes
        let (stdin, stdout, stderr) = (try Pipe(), try Pipe(), try Pipe())
        let process: ChildProcess
        do {
            defer { for end in [stdin.reading, stdout.writing, stderr.writing] { close(end) } }
            process = try ChildProcess(
                arguments, environment: environment, input: stdin.reading, output: .null, error: .null,
                pipes: (stdout.writing, stderr.writing))
        } catch {
            for end in [stdin.writing, stdout.reading, stderr.reading] { close(end) }
            throw error
        }
        // Written and read at once: a child that fills one pipe waits for it to be read.
        let inputBytes = Array((input ?? "").utf8)
        let writer = Thread.detach {
            inputBytes.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(stdin.writing, bytes.baseAddress! + offset, bytes.count - offset)
                    if written > 0 {
                        offset += written
                    } else if written < 0 && errno == EINTR {
                        continue
                    } else {
                        break  // the child closed its input (EPIPE): the rest is not wanted
                    }
                }
            }
            close(stdin.writing)
        }
        let errorReader = Thread.detach { readToEnd(stderr.reading) }
        let output = readToEnd(stdout.reading)
        let error = errorReader.join()
        writer.join()
        for end in [stdout.reading, stderr.reading] { close(end) }
        return Outcome(
            status: process.wait().status, output: String(decoding: output, as: UTF8.self),
            error: String(decoding: error, as: UTF8.self))
    }

    /// Waits for the process to end (once; later calls return the same).
    @discardableResult
    public func wait() -> Termination {
        while true {
            if let ended = termination.withLock({ $0 }) { return ended }
            var status: Int32 = 0
            var usage = rusage()
            let reaped = wait4(pid, &status, 0, &usage)
            if reaped == pid { return record(status: status, usage: usage) }
            // EINTR: again. ECHILD: another thread reaped it and records it.
            if reaped < 0 && errno == ECHILD { sched_yield() }
        }
    }

    /// Whether the process has not ended yet.
    public var isRunning: Bool {
        if termination.withLock({ $0 }) != nil { return false }
        var status: Int32 = 0
        var usage = rusage()
        guard wait4(pid, &status, WNOHANG, &usage) == pid else { return termination.withLock { $0 } == nil }
        record(status: status, usage: usage)
        return false
    }

    /// Sends `signal` (SIGTERM unless said otherwise), unless the process has ended.
    public func terminate(_ signal: Int32 = SIGTERM) {
        guard isRunning else { return }
        kill(pid, signal)
    }

    /// Asks the process to stop (SIGTERM), kills it if it has not after `grace` seconds, and reaps it.
    public func stop(grace: Duration = .seconds(10)) {
        terminate()
        let deadline = ContinuousClock.now + grace
        while isRunning {
            guard ContinuousClock.now < deadline else {
                kill(pid, SIGKILL)
                break
            }
            usleep(20_000)
        }
        wait()
    }

    @discardableResult
    private func record(status: Int32, usage: rusage) -> Termination {
        let signal = status & 0x7F
        let ended = Termination(
            status: signal == 0 ? (status >> 8) & 0xFF : 128 + signal, peakResidentKiB: usage.ru_maxrss,
            cpuSeconds: Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
                + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000)
        termination.withLock { $0 = ended }
        return ended
    }

    /// Writing to a child that has exited must fail with EPIPE, not end this process with SIGPIPE. Set only
    /// by the launches that write to a child: a command whose output is piped into `head` still ends quietly.
    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    private static func readToEnd(_ descriptor: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count > 0 {
                bytes += buffer[..<count]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return bytes
            }
        }
    }

    /// Both ends of a pipe, closed on exec in this process (the child gets copies made by `dup2`).
    private struct Pipe {
        let reading: Int32
        let writing: Int32

        init() throws {
            var ends: [Int32] = [-1, -1]
            // pipe2(O_CLOEXEC) is not exported to Swift; children spawned here close what they were not
            // given anyway, so the moment between pipe and fcntl leaks nothing.
            guard pipe(&ends) == 0 else {
                throw ChildProcessError(description: "could not make a pipe: \(String(cString: strerror(errno)))")
            }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            (reading, writing) = (ends[0], ends[1])
        }
    }
}

/// Why a child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}

extension Thread {
    /// Runs `work` on a new thread; `join()` waits for its result.
    fileprivate static func detach<Value: Sendable>(_ work: @escaping @Sendable () -> Value) -> Joinable<Value> {
        let joinable = Joinable<Value>()
        Thread.detachNewThread {
            let value = work()
            joinable.finish(value)
        }
        return joinable
    }

    fileprivate final class Joinable<Value: Sendable>: Sendable {
        private let done = DispatchSemaphore(value: 0)
        private let value = Mutex<Value?>(nil)

        func finish(_ result: Value) {
            value.withLock { $0 = result }
            done.signal()
        }

        @discardableResult
        func join() -> Value {
            done.wait()
            return value.withLock { $0! }
        }
    }
}
