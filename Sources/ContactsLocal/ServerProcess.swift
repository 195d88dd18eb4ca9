import ContactsModel
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Starting the local server's process, and the port checks around it.
enum ServerProcess {
    /// Servers this process started and has not reaped: a long-lived app that starts the server again
    /// after it died must not collect zombies.
    private static let spawned = Mutex<Set<pid_t>>([])

    /// Starts `executable` with `arguments` in the background, its output appended to `log` (created 0600).
    static func spawn(executable: String, arguments: [String], log: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else open here (a lock, another program's pipe) may live on in the long-lived server.
        for descriptor in openDescriptors() where descriptor > 2 {
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
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw DeviceError(
                "could not start the local sync server (\(executable) server run): \(String(cString: strerror(result)))"
            )
        }
        spawned.withLock { _ = $0.insert(pid) }
        return pid
    }

    /// Whether the server `pid`, started here, has exited (and so has been reaped).
    static func hasExited(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return false }
        spawned.withLock { _ = $0.remove(pid) }
        return true
    }

    /// Reaps the servers started here that have exited since.
    static func reapSpawned() {
        for pid in spawned.withLock({ Array($0) }) { _ = hasExited(pid) }
    }

    private static func openDescriptors() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
            .filter { fcntl($0, F_GETFD) >= 0 }
    }

    /// A port nobody listens on now, from the kernel.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw DeviceError("cannot open a socket to find a free port") }
        defer { close(descriptor) }
        guard var address = bind(descriptor, port: 0) else {
            throw DeviceError("cannot find a free port on 127.0.0.1")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether a server could listen on `port` of 127.0.0.1 now. With `SO_REUSEADDR`, as the server
    /// itself binds: connections of a server that just died linger in TIME_WAIT, and must not count.
    static func canListen(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        guard bind(descriptor, port: port) != nil else { return false }
        return listen(descriptor, 1) == 0
    }

    private static func bind(_ descriptor: Int32, port: Int) -> sockaddr_in? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return bound == 0 ? address : nil
    }
}
