import ContactsModel
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive `flock` on a file, taken without blocking a thread, and a way to see who holds one.
final class FileLock {
    private var descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Takes the lock on `path` (created 0600), polling so that no thread blocks while another process
    /// holds it; gives up after `timeout` with a message naming `purpose`.
    static func acquire(_ path: String, purpose: String, timeout: Duration = .seconds(60)) async throws -> FileLock {
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DeviceError("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        let deadline = ContinuousClock.now + timeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard ContinuousClock.now < deadline else {
                close(descriptor)
                throw DeviceError(
                    "another contacts process has been \(purpose) for \(timeout) (it holds \(path)); try again, or end that process"
                )
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

    /// Releases the lock (as dropping the last reference does).
    func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit {
        release()
    }

    /// The process holding an exclusive `flock` on `path`, from `/proc/locks`. Only reads: trying to take
    /// the lock to find out would make a server starting at that instant fail to take it.
    static func holder(of path: String) -> pid_t? {
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
