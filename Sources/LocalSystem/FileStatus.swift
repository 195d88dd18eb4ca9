import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What the file system says of one path or open file: its kind, owner, permission bits and size.
///
/// The programs' one home for `stat`, `lstat` and `fstat`. Each file that asked them itself imported the C
/// module it happened to find `stat` in, and whether the compiler saw that module depended on which files
/// a build compiled together (a clean debug build stopped where an incremental one passed). Here the
/// question is asked once, with its imports, and answered in Swift's own types.
///
/// A symbolic link is reported as a link unless ``of(_:followingSymbolicLinks:)`` is asked to follow it:
/// the checks that decide whom to trust must see a link as a link.
public struct FileStatus: Sendable, Equatable {
    /// What kind of file it is (`st_mode & S_IFMT`).
    public enum Kind: Sendable, Equatable {
        case regular
        case directory
        case symbolicLink
        case socket
        case fifo
        case characterDevice
        case blockDevice
        case unknown
    }

    /// The file's kind.
    public var kind: Kind
    /// The user ID that owns it.
    public var owner: uid_t
    /// Its permission bits, with set-user-ID, set-group-ID and sticky (`st_mode & 0o7777`).
    public var mode: mode_t
    /// Its size in bytes (a link's is the length of its target's path).
    public var size: Int64
    /// The device it is on (`st_dev`).
    public var device: UInt64
    /// Its inode number on that device.
    public var inode: UInt64

    /// Whether the effective user of this process owns it.
    public var isOwnedByThisUser: Bool { owner == geteuid() }

    /// The permission bits that let group or others read, write or enter (`mode & 0o077`); 0 when only the
    /// owner may.
    public var bitsForOthers: mode_t { mode & 0o077 }

    /// The mode in octal as `ls` and `chmod` spell it ("700", "2775").
    public var octalMode: String { String(mode, radix: 8) }

    /// The status of the file at `path`. A symbolic link is reported as itself (`lstat`) unless
    /// `followingSymbolicLinks`, when its target is (`stat`).
    /// - Throws: ``FileStatusError`` with the path and `errno` (``FileStatusError/isMissing`` for ENOENT).
    public static func of(_ path: String, followingSymbolicLinks: Bool = false) throws(FileStatusError) -> FileStatus {
        var info = stat()
        let result = followingSymbolicLinks ? stat(path, &info) : lstat(path, &info)
        guard result == 0 else { throw FileStatusError(path: path, errno: errno) }
        return FileStatus(info)
    }

    /// The status of the file open as `descriptor` (`fstat`); `path` names it in an error.
    public static func of(descriptor: Int32, path: String) throws(FileStatusError) -> FileStatus {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw FileStatusError(path: path, errno: errno) }
        return FileStatus(info)
    }

    /// The status of `path` when something is there; nil when nothing is (or it cannot be read).
    public static func ifPresent(_ path: String, followingSymbolicLinks: Bool = false) -> FileStatus? {
        try? of(path, followingSymbolicLinks: followingSymbolicLinks)
    }

    /// A status with the given facts (for tests and callers that know them).
    public init(
        kind: Kind, owner: uid_t, mode: mode_t, size: Int64 = 0, device: UInt64 = 0, inode: UInt64 = 0
    ) {
        self.kind = kind
        self.owner = owner
        self.mode = mode
        self.size = size
        self.device = device
        self.inode = inode
    }

    private init(_ info: stat) {
        self.init(
            kind: Kind(info.st_mode & S_IFMT),
            owner: info.st_uid,
            mode: info.st_mode & 0o7777,
            size: Int64(info.st_size),
            device: UInt64(info.st_dev),
            inode: UInt64(info.st_ino)
        )
    }
}

extension FileStatus.Kind {
    fileprivate init(_ format: mode_t) {
        switch format {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symbolicLink
        case S_IFSOCK: self = .socket
        case S_IFIFO: self = .fifo
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        default: self = .unknown
        }
    }
}

/// Why ``FileStatus`` could not be read: the path and the system's `errno`.
public struct FileStatusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path asked about.
    public var path: String
    /// The system's error number.
    public var errno: Int32

    /// Whether nothing is at the path (ENOENT), as opposed to a path that cannot be looked at.
    public var isMissing: Bool { errno == ENOENT }

    /// The system's words for ``errno`` ("Permission denied").
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String { "cannot look at \(path): \(reason)" }
}
