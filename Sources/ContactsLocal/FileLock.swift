import ContactsModel
import Foundation
import LocalSystem

#if canImport(Glibc)
    import Glibc
#endif

extension FileLock {
    /// Takes the lock on `path` (created 0600), waiting up to `timeout` while another contacts process holds
    /// it; gives up with a message naming `purpose`.
    static func acquire(_ path: String, purpose: String, timeout: Duration = .seconds(60)) async throws -> FileLock {
        do {
            return try await acquire(path, timeout: timeout)
        } catch FileLockError.cannotOpen(_, let errno) {
            throw DeviceError("cannot create \(path): \(String(cString: strerror(errno)))")
        } catch FileLockError.timedOut {
            throw DeviceError(
                "another contacts process has been \(purpose) for \(timeout) (it holds \(path)); try again, or end that process"
            )
        }
    }
}
