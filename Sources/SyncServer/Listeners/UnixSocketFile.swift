import Foundation
import LocalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The file of the server's Unix domain socket: checked before the server binds it, made private
/// once bound, removed when the server stops.
enum UnixSocketFile {
    /// Most bytes of a socket path (`sockaddr_un.sun_path`, less its terminating zero).
    static let maximumPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Makes `path` ready to bind: nothing there, or a stale socket nobody answers on (removed).
    ///
    /// - Throws: ``StartupError`` when a server answers on the socket, when something that is not a
    ///   socket is at `path` (it is never removed: a typo must not cost a file), or when the path is
    ///   too long for a socket.
    static func prepare(_ path: String) throws {
        guard path.utf8.count <= maximumPathBytes else {
            throw StartupError(
                "the socket path \(path) is \(path.utf8.count) bytes long; a Unix socket's path takes at most \(maximumPathBytes); choose a shorter one"
            )
        }
        let status: FileStatus
        do {
            status = try FileStatus.of(path)
        } catch {
            if error.isMissing { return }
            throw StartupError("cannot look at the socket path \(path): \(error.reason)")
        }
        guard status.kind == .socket else {
            throw StartupError(
                "\(path) exists and is not a socket; move it away or choose another socket path")
        }
        if answers(path) {
            throw StartupError(
                "a server already answers on the socket \(path); stop it first, or choose another socket path")
        }
        // A socket left by a server that did not stop gracefully: nobody listens on it any more.
        guard unlink(path) == 0 || errno == ENOENT else {
            throw StartupError(
                "cannot remove the stale socket \(path): \(String(cString: strerror(errno))); remove it by hand")
        }
    }

    /// Lets only the owner connect to the bound socket.
    ///
    /// Connecting to a Unix socket needs write permission on it. The socket is bound inside
    /// Hummingbird, where the process's umask cannot be narrowed for the bind alone (the umask is
    /// process-wide: narrowing it around an asynchronous bind would change the mode of files
    /// other threads create meanwhile), so the mode is set right after the bind, before the
    /// server says it listens. In between, the socket's directory is what keeps others out: the
    /// local server's is 0700.
    static func makePrivate(_ path: String) throws {
        guard chmod(path, 0o600) == 0 else {
            throw StartupError(
                "cannot make the socket \(path) private (mode 0600): \(String(cString: strerror(errno)))")
        }
    }

    /// Removes the socket at `path` when the server stops; leaves anything that is not a socket.
    static func remove(_ path: String) {
        guard FileStatus.ifPresent(path)?.kind == .socket else { return }
        unlink(path)
    }

    /// Whether something accepts connections on the socket at `path`.
    private static func answers(_ path: String) -> Bool {
        let descriptor = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: path.utf8.prefix(buffer.count - 1))
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        // Non-blocking: a listener whose queue is full answers EAGAIN instead of making us wait.
        return connected == 0 || errno == EAGAIN
    }
}
