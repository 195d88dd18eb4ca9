import ContactsModel

/// Why the zero-setup local server cannot be used, with the facts a message needs. Programs word
/// these their own way (naming their own commands); ``description`` is a plain default.
public enum LocalServerError: Error, Equatable, CustomStringConvertible {
    /// The socket's path is longer than a Unix socket address holds.
    case socketPathTooLong(String, limit: Int)
    /// The directory that holds the socket could let another user in (the problem says how).
    case unsafeDirectory(String, String)
    /// A server holds the storage but does not answer on its socket.
    case notAnswering(pid: Int32, log: String)
    /// The server started did not answer within its time.
    case didNotStart(log: String)
    /// The server started exited before it answered; its log's last line says why.
    case stoppedWhileStarting(reason: String?, log: String)
    case cannotStop(pid: Int32, reason: String)
    case didNotStop(pid: Int32, timeout: Duration)
    case cannotWrite(String, reason: String)
    /// The server's program could not be started (the launcher's reason).
    case cannotLaunch(reason: String)
    /// Another process has held the lock that lets one process start the server for all of `waited`.
    case startLockHeld(path: String, waited: Duration)

    public var description: String {
        switch self {
        case .socketPathTooLong(let path, let limit):
            "the local sync server's socket path \(path) is \(path.utf8.count) bytes, more than a Unix socket holds (\(limit)); use a data directory with a shorter path"
        case .unsafeDirectory(let directory, let problem):
            "the local sync server's directory \(directory) is not safe to hold its socket: \(problem)"
        case .notAnswering(let pid, let log):
            "the local sync server (pid \(pid)) runs but does not answer on its socket; its log is \(log). Stop it and try again"
        case .didNotStart(let log):
            "the local sync server did not start within 30 s; its log is \(log)"
        case .stoppedWhileStarting(let reason, let log):
            "the local sync server stopped as it started: \(reason ?? "no reason given"); its log is \(log)"
        case .cannotStop(let pid, let reason):
            "cannot stop the local sync server (pid \(pid)): \(reason)"
        case .didNotStop(let pid, let timeout):
            "the local sync server (pid \(pid)) did not stop within \(timeout) of SIGTERM; SIGKILL stops it at once (its data is safe)"
        case .cannotWrite(let path, let reason):
            "cannot write \(path): \(reason)"
        case .cannotLaunch(let reason):
            "could not start the local sync server: \(reason)"
        case .startLockHeld(let path, let waited):
            "another contacts process has been starting the local sync server for \(waited) (it holds \(path)); try again, or end that process"
        }
    }
}
