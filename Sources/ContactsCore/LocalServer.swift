import Foundation
import SyncCore
import SyncCrypto
import SyncKit

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
/// It keeps its port: the port is saved with the data (`server/address`), so a server started
/// again after a crash or a reboot listens where the running apps and the devices' settings expect
/// it, and apps that lost it find it again by themselves (see ``LocalServerKeeper``).
///
/// Nobody else on the machine gets at your contacts through it: the server's storage, its
/// address file and the account's password live in your data directory (mode 0700, files 0600),
/// and without the password another Unix user can only create an empty account of their own.
public struct LocalServer: Sendable {
    public let dataDirectory: String
    /// The program to run as `<executable> server run …`.
    public let executable: String

    public init(dataDirectory: String, executable: String) {
        self.dataDirectory = dataDirectory
        self.executable = executable
    }

    public var serverDirectory: String { dataDirectory + "/server" }
    /// The port (first line) and process ID (second line) of the last server that listened.
    public var addressFile: String { serverDirectory + "/address" }
    public var logFile: String { serverDirectory + "/server.log" }
    public var storagePath: String { serverDirectory + "/server.sqlite" }
    /// Where the local account's name, password and passphrase are kept.
    public var accountFile: String { dataDirectory + "/local-account" }
    /// Held by whoever decides whether to start or stop the server.
    var startLockPath: String { serverDirectory + "/start.lock" }
    /// Held by the server for as long as it runs (`SyncServerRunner` locks its storage).
    var storageLockPath: String { storagePath + ".lock" }
    /// Present after `contacts server stop`: apps then wait for the server instead of starting it again.
    var stopMarker: String { serverDirectory + "/stopped" }

    /// The local server that runs now.
    public struct Running: Sendable, Equatable {
        /// Its process ID.
        public var pid: Int32
        /// The port it listens on (or, while it starts, will listen on).
        public var port: Int
        public var url: URL { LocalServer.url(port: port) }
    }

    static func url(port: Int) -> URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The server that runs now on this data directory's storage, if one does: the process holding the
    /// storage's lock, which the kernel releases however the server ends (even `kill -9`).
    public func running() -> Running? {
        guard let pid = FileLock.holder(of: storageLockPath) else { return nil }
        return Running(pid: pid, port: savedPort() ?? 0)
    }

    /// The port the server listens on, or will listen on when started again.
    public func savedPort() -> Int? {
        guard let text = try? String(contentsOfFile: addressFile, encoding: .utf8),
            let port = text.split(separator: "\n").first.flatMap({ Int($0) }), (1...65535).contains(port)
        else { return nil }
        return port
    }

    /// The server's address, whether it runs now or not (it comes back there).
    public func knownURL() -> URL? {
        savedPort().map(Self.url(port:))
    }

    /// The process ID of the last server that listened, as it recorded it.
    public func knownProcessID() -> Int32? {
        guard let text = try? String(contentsOfFile: addressFile, encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n")
        return lines.count > 1 ? Int32(lines[1]) : nil
    }

    /// Whether `contacts server stop` stopped the server, and nothing started it since.
    public var wasStoppedOnPurpose: Bool { FileManager.default.fileExists(atPath: stopMarker) }

    /// Whether `path` is this data directory's server storage, so that a server on it is the local server.
    public func isLocalStorage(_ path: String) -> Bool {
        URL(fileURLWithPath: path).standardizedFileURL.path
            == URL(fileURLWithPath: storagePath).standardizedFileURL.path
    }

    // MARK: Starting and stopping

    /// The URL of the running local server, starting one when none runs: on `port` if given, else on the
    /// saved port, else (the first time) on a free one.
    public func ensureRunning(port: Int? = nil) async throws -> URL {
        try await start(port: port, respectingStop: false)!
    }

    /// Starts the server again after it died, unless `contacts server stop` stopped it; nil then.
    func restartUnlessStopped() async throws -> URL? {
        try await start(port: nil, respectingStop: true)
    }

    private func start(port requested: Int?, respectingStop: Bool) async throws -> URL? {
        try makePrivateDirectory(dataDirectory)
        try makePrivateDirectory(serverDirectory)
        // One process at a time decides whether to start the server; the others then find it running.
        let lock = try await FileLock.acquire(startLockPath, purpose: "starting the local sync server")
        defer { lock.release() }

        if let running = running() {
            if let requested, requested != 0, requested != running.port {
                throw DeviceError(
                    "the local sync server already runs on port \(running.port) (pid \(running.pid)); stop it with `contacts server stop` first, then start it with --port \(requested)"
                )
            }
            if try await waitUntilAnswering(running.url, spawned: nil) { return running.url }
            throw DeviceError(
                "the local sync server (pid \(running.pid)) runs but does not answer at \(running.url.absoluteString); its log is \(logFile). Stop it with `contacts server stop` and try again"
            )
        }
        if respectingStop && wasStoppedOnPurpose { return nil }
        let port =
            try requested.map { $0 == 0 ? try ServerProcess.freePort() : $0 } ?? savedPort() ?? ServerProcess.freePort()
        guard ServerProcess.canListen(port: port) else { throw portTaken(port) }
        let pid = try ServerProcess.spawn(
            executable: executable,
            arguments: ["server", "run", "--data-dir", dataDirectory, "--port", String(port), "--detach"],
            log: logFile)
        let url = Self.url(port: port)
        if try await waitUntilAnswering(url, spawned: pid) { return url }
        throw DeviceError(
            "the local sync server did not start within 30 s; its log is \(logFile). Or pass --server URL to use another server"
        )
    }

    /// Waits up to 30 s for the server to answer at `url` while it holds the storage lock. Throws when the
    /// process `spawned` ends first, with the reason from its log.
    private func waitUntilAnswering(_ url: URL, spawned: pid_t?) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if running() != nil, await answers(url) { return true }
            if let spawned, ServerProcess.hasExited(spawned) {
                throw DeviceError(
                    "the local sync server stopped as it started: \(lastLogLine() ?? "no reason given"); its log is \(logFile)"
                )
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Stops the running server gracefully (SIGTERM: requests in flight finish) and waits until it has
    /// exited. Apps keep it stopped until it is started again. Returns its process ID, or nil when none ran.
    @discardableResult
    public func stop(timeout: Duration = .seconds(60)) async throws -> Int32? {
        guard FileManager.default.fileExists(atPath: serverDirectory) else { return nil }
        let lock = try await FileLock.acquire(startLockPath, purpose: "starting the local sync server")
        defer { lock.release() }
        guard let running = running() else { return nil }
        // First, so that no app starts it again as it goes.
        guard
            FileManager.default.createFile(atPath: stopMarker, contents: Data(), attributes: [.posixPermissions: 0o600])
        else { throw DeviceError("cannot write \(stopMarker)") }
        guard kill(running.pid, SIGTERM) == 0 else {
            throw DeviceError(
                "cannot stop the local sync server (pid \(running.pid)): \(String(cString: strerror(errno)))")
        }
        let deadline = ContinuousClock.now + timeout
        while self.running() != nil {
            ServerProcess.reapSpawned()
            guard ContinuousClock.now < deadline else {
                throw DeviceError(
                    "the local sync server (pid \(running.pid)) did not stop within \(timeout) of SIGTERM; `kill -9 \(running.pid)` stops it at once (its data is safe)"
                )
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return running.pid
    }

    /// Called by the server once it listens: saves its port (it keeps it from now on) and process ID.
    public func recordListening(port: Int, pid: Int32) throws {
        try makePrivateDirectory(serverDirectory)
        try write("\(port)\n\(pid)\n", to: addressFile)
    }

    /// Called by a server as it starts: apps may start it again from now on.
    public func clearStopMarker() {
        try? FileManager.default.removeItem(atPath: stopMarker)
    }

    /// Whether the server at `url` answers its health check.
    func answers(_ url: URL) async -> Bool {
        (try? await AccountClient(serverURL: url).health(timeout: .seconds(1))) != nil
    }

    private func portTaken(_ port: Int) -> DeviceError {
        DeviceError(
            "port \(port) on 127.0.0.1, where the local sync server listens (saved in \(addressFile)), is in use by another program. Stop that program (`ss -ltnp 'sport = :\(port)'` shows which), or move the local server: `contacts server start --port 0` picks a free port (then restart open contacts apps)"
        )
    }

    private func lastLogLine() -> String? {
        guard let text = try? String(contentsOfFile: logFile, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").last.map { String($0.suffix(300)) }
    }

    // MARK: The account

    /// The account every device in this data directory signs in with, created on first use, and the
    /// passphrase that encrypts its contacts (the server never sees it). A file from a version before
    /// encryption gets a passphrase added.
    public func account() throws -> (username: String, password: String, passphrase: String, isNew: Bool) {
        if let text = try? String(contentsOfFile: accountFile, encoding: .utf8) {
            let lines = text.split(separator: "\n").map(String.init)
            if lines.count >= 3 { return (lines[0], lines[1], lines[2], false) }
            if lines.count == 2 {
                let passphrase = Passphrase.generate()
                try write("\(lines[0])\n\(lines[1])\n\(passphrase)\n", to: accountFile)
                return (lines[0], lines[1], passphrase, false)
            }
        }
        let user = ProcessInfo.processInfo.environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "me"
        let username = "local-" + String(user.filter { $0.isASCII && ($0.isLetter || $0.isNumber) }.prefix(40))
        var bytes = [UInt8](repeating: 0, count: 24)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        let password = Data(bytes).base64EncodedString()
        let passphrase = Passphrase.generate()
        try makePrivateDirectory(dataDirectory)
        try write("\(username)\n\(password)\n\(passphrase)\n", to: accountFile)
        return (username, password, passphrase, true)
    }

    /// Replaces the local account's passphrase (after an encrypted-data reset).
    public func setAccountPassphrase(_ passphrase: String) throws {
        let account = try account()
        try write("\(account.username)\n\(account.password)\n\(passphrase)\n", to: accountFile)
    }

    /// A port nobody listens on now, from the kernel.
    public static func freePort() throws -> Int {
        try ServerProcess.freePort()
    }

    // MARK: Files

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
        let descriptor = open(temporary, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw DeviceError("cannot write \(path): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == bytes.count, rename(temporary, path) == 0 else { throw DeviceError("cannot write \(path)") }
    }
}
