import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The SQLite storage's directory, checked at start: whoever may write in it may replace the
/// storage file, its write-ahead log or its lock, and so read or change every account's data.
enum StorageDirectory {
    /// Refuses a directory owned by another user, or writable by group or others.
    static func check(_ directory: String) throws {
        var status = stat()
        guard stat(directory, &status) == 0 else {
            throw StartupError(
                "cannot look at the storage directory \(directory): \(String(cString: strerror(errno)))")
        }
        guard status.st_uid == geteuid() else {
            throw StartupError(
                "the storage directory \(directory) belongs to another user (uid \(status.st_uid)); keep the storage in a directory of your own"
            )
        }
        let mode = status.st_mode & 0o7777
        guard mode & 0o022 == 0 else {
            throw StartupError(
                "other users can write in the storage directory \(directory) (mode \(String(mode, radix: 8))) and could replace the storage; run chmod 700 \(directory)"
            )
        }
    }
}
