import Foundation
import LocalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Why a device could not be opened on this machine, with the facts; programs word these their own way
/// (the `contacts` CLI names its `--device` option).
public enum DeviceLockError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process has the device open.
    case inUse(device: String)
    /// The device's lock file could not be created.
    case cannotCreate(path: String, reason: String)

    public var description: String {
        switch self {
        case .inUse(let device):
            "device '\(device)' is open in another contacts process; close it first, or open another device"
        case .cannotCreate(let path, let reason): "cannot create the lock file \(path): \(reason)"
        }
    }
}

extension FileLock {
    /// The lock that keeps two processes from opening one device (their engines would send the same outbox),
    /// taken without waiting.
    package static func device(path: String, deviceName: String) throws(DeviceLockError) -> FileLock {
        do {
            return try acquire(path)
        } catch {
            switch error {
            case .cannotOpen(_, let errno): throw .cannotCreate(path: path, reason: String(cString: strerror(errno)))
            case .held, .timedOut: throw .inUse(device: deviceName)
            }
        }
    }
}
