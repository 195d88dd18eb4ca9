import Foundation
import SyncCore
import SyncEngine

#if canImport(Glibc)
    import Glibc
#endif

/// Where the app keeps its files: `$XDG_DATA_HOME/contacts`, or `~/.local/share/contacts`.
public enum ContactsPaths {
    public static func defaultDataDirectory() -> String {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return base + "/contacts"
    }
}

/// The zero-setup server: with no `--server`, the app uses a sync server of its own on loopback,
/// started in the background the first time it is needed (as tmux starts its server), and an
/// account created for it with a random password.
///
/// Nobody else on the machine gets at your contacts through it: the server's storage, its
/// address file and the account's password live in your data directory (mode 0700, files 0600),
/// and without the password another Unix user can only create an empty account of their own.
public struct LocalServer: Sendable {
    public let dataDirectory: String
    /// The program to run as `<executable> server …`.
    public let executable: String

    public init(dataDirectory: String, executable: String) {
        self.dataDirectory = dataDirectory
        self.executable = executable
    }

    var serverDirectory: String { dataDirectory + "/server" }
    var addressFile: String { serverDirectory + "/address" }
    public var logFile: String { serverDirectory + "/server.log" }
    public var storagePath: String { serverDirectory + "/server.sqlite" }
    var accountFile: String { dataDirectory + "/local-account" }

    /// The URL of the running local server, starting one when none answers.
    public func ensureRunning() async throws -> URL {
        try makePrivateDirectory(dataDirectory)
        try makePrivateDirectory(serverDirectory)
        // One process at a time decides whether to start the server.
        let lock = open(serverDirectory + "/start.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw DeviceError("cannot create \(serverDirectory)/start.lock") }
        defer { close(lock) }
        flock(lock, LOCK_EX)
        defer { flock(lock, LOCK_UN) }

        if let url = knownURL(), await answers(url) { return url }
        let port = try Self.freePort()
        let pid = try spawn(port: port)
        let url = URL(string: "http://127.0.0.1:\(port)")!
        for _ in 0..<200 {
            if await answers(url) {
                try write("\(port)\n\(pid)\n", to: addressFile)
                return url
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw DeviceError(
            "the local sync server did not start within 10 s; its log is \(logFile). Or pass --server URL to use another server"
        )
    }

    /// The address the last started server listens on, if any.
    public func knownURL() -> URL? {
        guard let text = try? String(contentsOfFile: addressFile, encoding: .utf8),
            let port = text.split(separator: "\n").first.flatMap({ Int($0) })
        else { return nil }
        return URL(string: "http://127.0.0.1:\(port)")
    }

    /// The process ID of the last started server, to stop it.
    public func knownProcessID() -> Int32? {
        guard let text = try? String(contentsOfFile: addressFile, encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n")
        return lines.count > 1 ? Int32(lines[1]) : nil
    }

    private func answers(_ url: URL) async -> Bool {
        (try? await AccountClient(serverURL: url).health(timeout: .seconds(1))) != nil
    }

    /// The account every device in this data directory signs in with, created on first use.
    public func account() throws -> (username: String, password: String, isNew: Bool) {
        if let text = try? String(contentsOfFile: accountFile, encoding: .utf8) {
            let lines = text.split(separator: "\n").map(String.init)
            if lines.count >= 2 { return (lines[0], lines[1], false) }
        }
        let user = ProcessInfo.processInfo.environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "me"
        let username = "local-" + String(user.filter { $0.isASCII && ($0.isLetter || $0.isNumber) }.prefix(40))
        var bytes = [UInt8](repeating: 0, count: 24)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        let password = Data(bytes).base64EncodedString()
        try write("\(username)\n\(password)\n", to: accountFile)
        return (username, password, true)
    }

    private func spawn(port: Int) throws -> pid_t {
        let arguments = [
            executable, "server", "--storage", storagePath, "--port", String(port), "--host", "127.0.0.1",
            // Its own session: closing the terminal that started it does not stop it.
            "--detach",
        ]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logFile, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else open here (a lock, another program's pipe) may live on in the long-lived server.
        for descriptor in Self.openDescriptors() where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The calling thread may block signals (test runners do); the server must get SIGTERM.
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw DeviceError(
                "could not start the local sync server (\(executable) server): \(String(cString: strerror(result)))")
        }
        return pid
    }

    private static func openDescriptors() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
            .filter { fcntl($0, F_GETFD) >= 0 }
    }

    /// A port nobody listens on now, from the kernel.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw DeviceError("cannot open a socket to find a free port") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw DeviceError("cannot find a free port on 127.0.0.1") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private func makePrivateDirectory(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw DeviceError("cannot create \(path): \(error.localizedDescription)")
        }
    }

    private func write(_ text: String, to path: String) throws {
        let temporary = path + ".tmp"
        guard
            FileManager.default.createFile(
                atPath: temporary, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else { throw DeviceError("cannot write \(path)") }
        guard rename(temporary, path) == 0 else { throw DeviceError("cannot write \(path)") }
    }
}
