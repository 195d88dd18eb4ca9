import LocalSystem

/// The SQLite storage's directory, checked at start: whoever may write in it may replace the
/// storage file, its write-ahead log or its lock, and so read or change every account's data.
enum StorageDirectory {
    /// Refuses a directory owned by another user, or writable by group or others.
    static func check(_ directory: String) throws {
        let status: FileStatus
        do {
            status = try FileStatus.of(directory, followingSymbolicLinks: true)
        } catch {
            throw StartupError("cannot look at the storage directory \(directory): \(error.reason)")
        }
        guard status.isOwnedByThisUser else {
            throw StartupError(
                "the storage directory \(directory) belongs to another user (uid \(status.owner)); keep the storage in a directory of your own"
            )
        }
        guard status.mode & 0o022 == 0 else {
            throw StartupError(
                "other users can write in the storage directory \(directory) (mode \(status.octalMode)) and could replace the storage; run chmod 700 \(directory)"
            )
        }
    }
}
