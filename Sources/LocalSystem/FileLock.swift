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
        record(holderOf: descriptor)
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
        record(holderOf: descriptor)
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

    /// The process holding an exclusive `flock` on `path`; nil when none does (or the file does not exist).
    /// Only reads: trying to take the lock to find out would make a process taking it at that instant fail.
    ///
    /// The holder writes its process ID into the file when it takes the lock; that process's open files
    /// (`/proc/PID/fdinfo`) say whether it still holds it. `/proc/locks` alone is not enough: it is read a
    /// page at a time, and a lock released elsewhere between two pages shifts the list, so that a busy
    /// machine's reader can miss a line. It is still asked for a holder that wrote no ID (a program
    /// from before this one).
    public static func holder(of path: String) -> pid_t? {
        guard let status = FileStatus.ifPresent(path, followingSymbolicLinks: true) else { return nil }
        let file = LockedFile(status)
        if let recorded = recordedHolder(path), holds(recorded, file) { return recorded }
        return read("/proc/locks").flatMap { file.exclusiveHolder(in: $0) }
    }

    /// Writes this process's ID into the lock file just taken, for ``holder(of:)``.
    private static func record(holderOf descriptor: Int32) {
        let text = Array("\(getpid())\n".utf8)
        guard ftruncate(descriptor, 0) == 0 else { return }
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    private static func recordedHolder(_ path: String) -> pid_t? {
        read(path).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Whether process `pid` holds an exclusive `flock` on `file` through one of its open files.
    private static func holds(_ pid: pid_t, _ file: LockedFile) -> Bool {
        let directory = "/proc/\(pid)/fdinfo"
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return false }
        // An open file's "lock:" lines name the locks it holds.
        return descriptors.contains { read("\(directory)/\($0)").flatMap(file.exclusiveHolder(in:)) == pid }
    }

    /// The file's text; nil when it cannot be opened or read (files under `/proc` vanish with what they
    /// describe).
    private static func read(_ path: String) -> String? {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return (try? DescriptorIO.readAll(descriptor)).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// A file as the kernel's lock lists name it: device numbers and inode.
private struct LockedFile {
    var major: UInt64
    var minor: UInt64
    var inode: UInt64

    init(_ status: FileStatus) {
        // glibc's major() and minor(), which Swift does not import.
        let device = status.device
        major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        inode = status.inode
    }

    /// The process of the first exclusive `flock` on this file among `text`'s lock lines, as
    /// `/proc/locks` writes them: "3: FLOCK  ADVISORY  WRITE 6777 fe:00:16223094 0 EOF" (a waiter's
    /// line has "->" after the number), or `/proc/PID/fdinfo/FD` with "lock:\t" before them.
    func exclusiveHolder(in text: String) -> pid_t? {
        for line in text.split(separator: "\n") {
            var fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.first == "lock:" { fields.removeFirst() }
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE" else { continue }
            let file = fields[5].split(separator: ":")
            guard file.count == 3, UInt64(file[2]) == inode, UInt64(file[0], radix: 16) == major,
                UInt64(file[1], radix: 16) == minor
            else { continue }
            return pid_t(fields[4])
        }
        return nil
    }
}
