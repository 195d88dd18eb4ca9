import ContactsModel
import Foundation

/// Keeps two processes from opening one device (their engines would send the same outbox).
package final class DeviceLock: Sendable {
    private let descriptor: Int32

    package init(path: String, deviceName: String) throws {
        descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DeviceError("cannot create the lock file \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw DeviceError(
                "device '\(deviceName)' is open in another contacts process; close it first, or pass another --device")
        }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
