import ContactsModel
import Foundation
import LocalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The checks on the app's data directory before anything in it is read or written: the directory (and the
/// `devices` directory and device files in it) must belong to the person running the app, and nobody else may
/// write there (another user could swap a device file, or plant a link where the app writes).
///
/// What the app creates is private from the start (directories 0700, files 0600). What earlier versions
/// created with the default umask (0755 directories, 0644 files), the person's own, is tightened to that
/// silently: nothing but their reading by others changes. What others can write, or what belongs to someone
/// else, is refused, with the facts for the message (``DataDirectoryError``); the app does not change who may
/// write there on the person's behalf, since something may already have been planted.
public enum DataDirectory {
    /// Checks (and creates, 0700, when missing) `path` and its `devices` directory, and checks every device
    /// file in it; tightens what only others' reading makes too open.
    public static func prepare(_ path: String) throws(DataDirectoryError) {
        try prepareDirectory(path)
        let devices = Layout(path).devices
        try prepareDirectory(devices)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: devices)) ?? []
        for name in names.sorted() where Layout.isDeviceStore(name) {
            try check(devices + "/" + name, isDirectory: false)
        }
    }

    /// Creates `path` (and missing parents) private, or checks the one there.
    private static func prepareDirectory(_ path: String) throws(DataDirectoryError) {
        if isMissing(path) {
            try create(path)
        } else {
            try check(path, isDirectory: true)
        }
    }

    /// mkdir with mode 0700: private from the first instant (a mkdir then a chmod would leave a moment in which
    /// it is not). Parents that are missing are created the same way.
    private static func create(_ path: String) throws(DataDirectoryError) {
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path, isMissing(parent) {
            try create(parent)
        }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw .cannotCreate(path: path, reason: errno) }
        // The umask may take bits away from 0700 (never add any): set it exactly.
        chmod(path, 0o700)
    }

    private static func check(_ path: String, isDirectory: Bool) throws(DataDirectoryError) {
        var info = try status(path)
        // A link could send the app's writes anywhere: the directory given is followed once by the
        // person's own path, but nothing inside it may be a link.
        if info.kind == .symbolicLink {
            guard isDirectory else { throw .symbolicLink(path: path) }
            info = try status(path, followingSymbolicLinks: true)
        }
        guard (info.kind == .directory) == isDirectory else { throw .notADirectory(path: path) }
        let user = geteuid()
        guard info.owner == user else { throw .ownedByAnotherUser(path: path, owner: info.owner, user: user) }
        let mode = info.mode
        guard mode & 0o022 == 0 else { throw .writableByOthers(path: path, mode: mode, isDirectory: isDirectory) }
        let wanted: mode_t = isDirectory ? 0o700 : 0o600
        if mode & 0o077 != 0 { chmod(path, mode & ~0o077 | wanted) }
    }

    private static func status(
        _ path: String, followingSymbolicLinks: Bool = false
    ) throws(DataDirectoryError) -> FileStatus {
        do {
            return try FileStatus.of(path, followingSymbolicLinks: followingSymbolicLinks)
        } catch {
            throw .unreadable(path: path, reason: error.errno)
        }
    }

    /// Whether nothing is at `path` (a path that cannot be looked at is not missing).
    private static func isMissing(_ path: String) -> Bool {
        do {
            _ = try FileStatus.of(path)
            return false
        } catch {
            return error.isMissing
        }
    }
}
