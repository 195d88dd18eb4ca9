import ContactsModel
import Foundation
import LocalSystem

#if canImport(Glibc)
    import Glibc
#endif

extension FileLock {
    /// The lock that keeps two processes from opening one device (their engines would send the same outbox),
    /// taken without waiting.
    package static func device(path: String, deviceName: String) throws -> FileLock {
        do {
            return try acquire(path)
        } catch .cannotOpen(_, let errno) {
            throw DeviceError("cannot create the lock file \(path): \(String(cString: strerror(errno)))")
        } catch .held, .timedOut {
            throw DeviceError(
                "device '\(deviceName)' is open in another contacts process; close it first, or pass another --device")
        }
    }
}
