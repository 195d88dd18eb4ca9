import Foundation
import LocalSystem

#if canImport(Glibc)
    import Glibc
#endif

extension FileLock {
    /// The lock that lets one process at a time start the local server, waiting up to `timeout` while
    /// another holds it. Throws ``LocalServerError`` (or `CancellationError`).
    static func serverStart(_ path: String, timeout: Duration = .seconds(60)) async throws -> FileLock {
        do {
            return try await acquire(path, timeout: timeout)
        } catch FileLockError.cannotOpen(_, let errno) {
            throw LocalServerError.cannotWrite(path, reason: String(cString: strerror(errno)))
        } catch FileLockError.held, FileLockError.timedOut {
            throw LocalServerError.startLockHeld(path: path, waited: timeout)
        }
    }
}
