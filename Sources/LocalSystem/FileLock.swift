import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive `flock` on a file: the one lock of the project's programs (a device's lock, the local server's
/// start lock, the sync server's storage lock).
///
/// The lock file is opened close-on-exec, so no program started while it is held inherits it (a child that
/// outlived its parent would keep the lock). Taking it never blocks a thread: ``acquire(_:)`` tries once,
/// ``acquire(_:timeout:)`` polls. ``holder(of:)`` names the process that holds one, without touching it.
/// The lock is released by ``release()`` or when the last reference goes.
public final class FileLock: Sendable {
    private let descriptor: Mutex<Int32>

    private init(descriptor: Int32) {
        self.descriptor = Mutex(descriptor)
    }

    /// Takes the lock on `path` (created 0600) if nobody holds it now; never waits.
    /// - Throws: ``FileLockError/held(path:holder:)`` when another open file description holds it (another
    ///   process, or this one through another ``FileLock``), ``FileLockError/cannotOpen(path:errno:)``.
    public static func acquire(_ path: String) throws(FileLockError) -> FileLock {
        let descriptor = try open(path)
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw .held(path: path, holder: holder(of: path))
        }
        return FileLock(descriptor: descriptor)
    }

    /// Takes the lock on `path` (created 0600), polling so that no thread blocks while another process holds
    /// it, for up to `timeout`.
    /// - Throws: ``FileLockError/timedOut(path:after:)``, ``FileLockError/cannotOpen(path:errno:)``, or
    ///   `CancellationError` when the task is cancelled while it waits.
    public static func acquire(_ path: String, timeout: Duration) async throws -> FileLock {
        let descriptor = try open(path)
        let deadline = ContinuousClock.now + timeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard ContinuousClock.now < deadline else {
                close(descriptor)
                throw FileLockError.timedOut(path: path, after: timeout)
            }
            do {
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                close(descriptor)
                throw error
            }
        }
        return FileLock(descriptor: descriptor)
    }

    private static func open(_ path: String) throws(FileLockError) -> Int32 {
        let descriptor = Glibc.open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        return descriptor
    }

    /// Releases the lock (as dropping the last reference does); later calls do nothing.
    public func release() {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            flock(descriptor, LOCK_UN)
            close(descriptor)
            descriptor = -1
        }
    }

    deinit {
        release()
    }

    /// The process holding an exclusive `flock` on `path`, from `/proc/locks`; nil when none does (or the
    /// file does not exist). Only reads: trying to take the lock to find out would make a process taking it
    /// at that instant fail.
    public static func holder(of path: String) -> pid_t? {
        var info = stat()
        guard stat(path, &info) == 0,
            let handle = FileHandle(forReadingAtPath: "/proc/locks")
        else { return nil }
        defer { try? handle.close() }
        let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        // glibc's major() and minor(), which Swift does not import.
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        // "3: FLOCK  ADVISORY  WRITE 6777 fe:00:16223094 0 EOF"; a waiter's line has "->" after the number.
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE" else { continue }
            let file = fields[5].split(separator: ":")
            guard file.count == 3, UInt64(file[2]) == UInt64(info.st_ino), UInt64(file[0], radix: 16) == major,
                UInt64(file[1], radix: 16) == minor
            else { continue }
            return pid_t(fields[4])
        }
        return nil
    }
}
