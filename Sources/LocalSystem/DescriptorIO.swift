#if canImport(Glibc)
    import Glibc
#endif

/// Whole reads and writes on an open file descriptor with `read(2)` and `write(2)`, going on after a
/// signal interrupts them; a failed read throws its `errno`, a failed write returns it. Foundation's `FileHandle` stops the process on a
/// read error instead, and files under `/proc` can vanish between the open and the read.
public enum DescriptorIO {
    /// Everything left to read from `descriptor`.
    public static func readAll(_ descriptor: Int32) throws(Errno) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw Errno(errno) }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
        }
    }

    /// Writes all of `bytes` to `descriptor`; nil when it did, else the `errno` of the failure (a write that
    /// takes nothing fails with `EIO`). An error code rather than a throw: callers write from inside
    /// `withUnsafeBytes`, whose closure cannot throw a typed error.
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return written < 0 ? errno : EIO }
            offset += written
        }
        return nil
    }

    /// Flushes the directory at `path` to disk, so that a name just made or renamed in it survives a crash.
    /// Best effort: a directory that cannot be opened is left as it is.
    public static func synchronizeDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// Flushes everything written to the file system that holds the directory at `path`, and the
    /// directory itself: one `syncfs(2)` for many files written without a flush each. Returns the `errno`
    /// of a failure. (`syncfs` is a GNU extension Swift's Glibc module leaves out: found by name; where
    /// it is missing, `sync(2)` does the same for every file system.)
    public static func synchronizeFileSystem(holding path: String) -> Int32? {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        if let syncfs = Self.syncfs {
            guard syncfs(descriptor) == 0 else { return errno }
        } else {
            sync()
        }
        return fsync(descriptor) == 0 ? nil : errno
    }

    private typealias SyncFS = @convention(c) (Int32) -> Int32

    private static let syncfs: SyncFS? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "syncfs") else { return nil }
        return unsafeBitCast(symbol, to: SyncFS.self)
    }()

    /// An `errno` value.
    public struct Errno: Error, Hashable {
        public var code: Int32
        public init(_ code: Int32) { self.code = code }
    }
}
