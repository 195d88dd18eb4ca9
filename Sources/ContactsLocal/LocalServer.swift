import ContactsModel
import Foundation
import LocalSystem
import SyncClient
import SyncCore
import SyncCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// Where the app keeps its files: `$XDG_DATA_HOME/contacts`, or `~/.local/share/contacts`.
public enum ContactsPaths {
    public static func defaultDataDirectory() -> String {
        let base =
            EnvironmentVariable.value("XDG_DATA_HOME").flatMap { $0.isEmpty ? nil : $0 }
            ?? (EnvironmentVariable.value("HOME") ?? NSHomeDirectory()) + "/.local/share"
        return base + "/contacts"
    }
}

/// The zero-setup server: with no `--server`, the app uses a sync server of its own, started in the
/// background the first time it is needed (as tmux starts its server), and an account created for it
/// with a random password.
///
/// It listens only on a Unix socket in the data directory (`server/sync.sock`), never on a TCP port:
/// a port is open to every user of the machine, and once the server stopped, any of them could listen
/// there and collect the token the apps send. Nobody but the user can create a socket in the 0700
/// `server/` directory, and every request checks that directory before it goes
/// (``ServerEndpoint/verify(sendingSecrets:_:)``), so the token reaches this user's own server or
/// nothing. The socket's path never changes, so apps find the server again by themselves after a
/// crash or a reboot (see ``LocalServerKeeper``).
///
/// The server's storage, its log and the account's password live in the data directory too
/// (mode 0700, files 0600).
public struct LocalServer: Sendable {
    public let dataDirectory: String
    /// The command that starts the server in the background on this data directory: the program first, then
    /// its arguments. The app that owns the server knows its own program and arguments; this type does not.
    public let launchCommand: [String]

    /// The release `launchCommand` starts: a running server older than it (one an earlier version of
    /// the app started, before an upgrade) is stopped and this one started in its place.
    public let version: ReleaseVersion

    /// A local server in `dataDirectory`, started (when it is not running) by running `launchCommand`,
    /// a program of release `version`.
    public init(dataDirectory: String, launchCommand: [String], version: ReleaseVersion = SyncRelease.version) {
        precondition(!launchCommand.isEmpty, "a launch command names its program")
        self.dataDirectory = dataDirectory
        self.launchCommand = launchCommand
        self.version = version
    }

    /// Where the data directory keeps the server's files (``DataDirectory/Layout``).
    var layout: DataDirectory.Layout { DataDirectory.Layout(dataDirectory) }
    public var serverDirectory: String { layout.server }
    /// The socket the server listens on.
    public var socketPath: String { layout.serverSocket }
    /// Where versions before the socket saved their TCP port (first line) and process ID (second line).
    /// Read only to move such an installation to the socket, then removed.
    var legacyAddressFile: String { layout.legacyServerAddress }
    public var logFile: String { layout.serverLog }
    public var storagePath: String { layout.serverStorage }
    /// Where the local account's name, password and passphrase are kept.
    public var accountFile: String { layout.localAccount }
    /// Held by whoever decides whether to start or stop the server.
    var startLockPath: String { layout.serverStartLock }
    /// Held by the server for as long as it runs (`SyncServerRunner` locks its storage).
    var storageLockPath: String { layout.serverStorageLock }
    /// Present after `contacts server stop`: apps then wait for the server instead of starting it again.
    var stopMarker: String { layout.serverStopMarker }

    /// The server's address: its socket, as a URL every client of the project takes.
    public var url: URL { ServerEndpoint.url(unixSocketPath: socketPath) }

    /// The local server that runs now.
    public struct Running: Sendable, Equatable {
        /// Its process ID.
        public var pid: Int32
    }

    /// The server that runs now on this data directory's storage, if one does: the process holding the
    /// storage's lock, which the kernel releases however the server ends (even `kill -9`).
    public func running() -> Running? {
        FileLock.holder(of: storageLockPath).map(Running.init(pid:))
    }

    /// The process ID of the server that runs now, if any.
    public func knownProcessID() -> Int32? {
        running()?.pid
    }

    /// Whether `contacts server stop` stopped the server, and nothing started it since.
    public var wasStoppedOnPurpose: Bool { FileManager.default.fileExists(atPath: stopMarker) }

    /// Whether `path` is this data directory's server storage, so that a server on it is the local server.
    public func isLocalStorage(_ path: String) -> Bool {
        URL(fileURLWithPath: path).standardizedFileURL.path
            == URL(fileURLWithPath: storagePath).standardizedFileURL.path
    }

    /// What makes the server's directory unsafe to hold its socket, or nil: it must be a directory of
    /// this user's that grants nothing to group or others, and the socket's path must fit a socket
    /// address.
    public func socketProblem() -> LocalServerError? {
        if socketPath.utf8.count > Self.maximumSocketPathBytes {
            return .socketPathTooLong(socketPath, limit: Self.maximumSocketPathBytes)
        }
        if let problem = ServerEndpoint.problem(withSocketDirectoryOf: socketPath) {
            return .unsafeDirectory(serverDirectory, problem)
        }
        return nil
    }

    /// `sun_path` holds 108 bytes, the last a NUL.
    static let maximumSocketPathBytes = 107

    // MARK: Starting and stopping

    /// The URL of the running local server, starting one when none runs.
    public func ensureRunning() async throws -> URL {
        try await start(respectingStop: false)!
    }

    /// Starts the server again after it died, unless `contacts server stop` stopped it; nil then.
    func restartUnlessStopped() async throws -> URL? {
        try await start(respectingStop: true)
    }

    private func start(respectingStop: Bool) async throws -> URL? {
        try makePrivateDirectory(dataDirectory)
        try makePrivateDirectory(serverDirectory)
        if let problem = socketProblem() { throw problem }
        // One process at a time decides whether to start the server; the others then find it running.
        let lock = try await FileLock.serverStart(startLockPath)
        defer { lock.release() }

        if let running = running() {
            if let health = try await waitUntilAnswering(
                spawned: nil, within: isLegacyInstallation ? .seconds(2) : .seconds(30))
            {
                guard isOlder(health) else { return answeringOnTheSocket() }
                // Started by an earlier version of the app, before an upgrade: this one takes over its data
                // (a newer server migrates the storage at start). Open apps reconnect by themselves.
                try await terminate(running, timeout: .seconds(60))
            } else {
                guard isLegacyInstallation else { throw LocalServerError.notAnswering(pid: running.pid, log: logFile) }
                // A server of a version before the socket, on its TCP port: stopped, and started again below
                // on the socket, with its data.
                try await terminate(running, timeout: .seconds(60))
            }
        }
        if respectingStop && wasStoppedOnPurpose { return nil }
        let server: ChildProcess
        do {
            server = try ChildProcess.startDetached(launchCommand, log: logFile)
        } catch {
            throw LocalServerError.cannotLaunch(reason: "\(error)")
        }
        if try await waitUntilAnswering(spawned: server, within: .seconds(30)) != nil { return answeringOnTheSocket() }
        throw LocalServerError.didNotStart(log: logFile)
    }

    /// The server answers on its socket: an installation from before the socket forgets its TCP port,
    /// whichever process started the server (one started by hand with `server run` included).
    private func answeringOnTheSocket() -> URL {
        try? FileManager.default.removeItem(atPath: legacyAddressFile)
        return url
    }

    /// Whether this data directory was last served by a version that listened on a TCP port.
    private var isLegacyInstallation: Bool { FileManager.default.fileExists(atPath: legacyAddressFile) }

    /// Waits up to `limit` for the server to answer on its socket while it holds the storage lock; its
    /// answer, or nil when none came. Throws when the process `spawned` ends first, with the reason from its log.
    private func waitUntilAnswering(spawned: ChildProcess?, within limit: Duration) async throws -> HealthInfo? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if running() != nil, let health = await health() { return health }
            if let spawned, !spawned.isRunning {
                throw LocalServerError.stoppedWhileStarting(reason: lastLogLine(), log: logFile)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    /// Stops the running server gracefully (SIGTERM: requests in flight finish) and waits until it has
    /// exited. Apps keep it stopped until it is started again. Returns its process ID, or nil when none ran.
    @discardableResult
    public func stop(timeout: Duration = .seconds(60)) async throws -> Int32? {
        guard FileManager.default.fileExists(atPath: serverDirectory) else { return nil }
        let lock = try await FileLock.serverStart(startLockPath)
        defer { lock.release() }
        guard let running = running() else { return nil }
        // First, so that no app starts it again as it goes.
        guard
            FileManager.default.createFile(atPath: stopMarker, contents: Data(), attributes: [.posixPermissions: 0o600])
        else { throw LocalServerError.cannotWrite(stopMarker, reason: "the file could not be created") }
        try await terminate(running, timeout: timeout)
        return running.pid
    }

    private func terminate(_ running: Running, timeout: Duration) async throws {
        guard kill(running.pid, SIGTERM) == 0 else {
            throw LocalServerError.cannotStop(pid: running.pid, reason: String(cString: strerror(errno)))
        }
        let deadline = ContinuousClock.now + timeout
        while self.running() != nil {
            ChildProcess.reapDetached()
            guard ContinuousClock.now < deadline else {
                throw LocalServerError.didNotStop(pid: running.pid, timeout: timeout)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Called by a server as it starts: apps may start it again from now on.
    public func clearStopMarker() {
        try? FileManager.default.removeItem(atPath: stopMarker)
    }

    /// Whether the server answers its health check on its socket.
    func answers() async -> Bool { await health() != nil }

    /// The server's answer to its health check on its socket; nil when none came within a second.
    private func health() async -> HealthInfo? {
        try? await AccountClient(serverURL: url).health(timeout: .seconds(1))
    }

    /// Whether a server that answered `health` is of an older release than ``version``.
    private func isOlder(_ health: HealthInfo) -> Bool {
        ReleaseVersion(health.version).map { $0 < version } ?? true
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

    /// Replaces the local account's password (after it was changed on the server).
    public func setAccountPassword(_ password: String) throws {
        let account = try account()
        try write("\(account.username)\n\(password)\n\(account.passphrase)\n", to: accountFile)
    }

    /// Forgets the local account (after it was deleted on the server): the next command makes a new one.
    public func forgetAccount() throws {
        do {
            try FileManager.default.removeItem(atPath: accountFile)
        } catch CocoaError.fileNoSuchFile {
        } catch {
            throw LocalServerError.cannotWrite(accountFile, reason: error.localizedDescription)
        }
    }

    /// Replaces the local account's passphrase (after an encrypted-data reset).
    public func setAccountPassphrase(_ passphrase: String) throws {
        let account = try account()
        try write("\(account.username)\n\(account.password)\n\(passphrase)\n", to: accountFile)
    }

    // MARK: Files

    private func makePrivateDirectory(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw LocalServerError.cannotWrite(path, reason: error.localizedDescription)
        }
    }

    /// Replaces `path` with `text` at once (see ``PrivateFile/replace(_:contents:)``: created exclusively,
    /// never through a symbolic link, 0600, renamed over the old file).
    private func write(_ text: String, to path: String) throws {
        do {
            try PrivateFile.replace(path, contents: Array(text.utf8))
        } catch {
            throw LocalServerError.cannotWrite(path, reason: "\(error)")
        }
    }
}
