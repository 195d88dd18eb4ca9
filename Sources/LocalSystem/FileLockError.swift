import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why a ``FileLock`` was not taken, with the facts; each program says it in its own words.
public enum FileLockError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The lock file could not be opened or created.
    case cannotOpen(path: String, errno: Int32)
    /// Someone holds the lock now: the process `holder` when `/proc/locks` names it.
    case held(path: String, holder: pid_t?)
    /// Someone held the lock for all of `after`.
    case timedOut(path: String, after: Duration)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let errno):
            "cannot open the lock file \(path): \(String(cString: strerror(errno)))"
        case .held(let path, let holder):
            "\(path) is locked by another process\(holder.map { " (pid \($0))" } ?? "")"
        case .timedOut(let path, let after):
            "\(path) has been locked by another process for \(after)"
        }
    }
}
