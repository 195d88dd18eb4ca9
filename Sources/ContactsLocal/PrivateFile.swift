import ContactsModel
import Foundation
import LocalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Files the app writes for the person alone (exports, the editor's temporary file): mode 0600 whatever the
/// umask, never through a symbolic link someone planted at the path, and an existing file replaced only
/// whole (a reader sees the old file or the new one, never half of one).
public enum PrivateFile {
    /// Creates `path`, which must not exist (O_CREAT | O_EXCL | O_NOFOLLOW: a symbolic link there, even one
    /// to nowhere, is refused and never followed), with mode 0600, and writes `contents` to it.
    public static func create(_ path: String, contents: [UInt8]) throws(PrivateFileError) {
        try create(path, .bytes(contents))
    }

    /// What a private file is made of: bytes at hand, or a file's, copied a piece at a time (a photo of
    /// 50 MB is never read whole).
    enum Contents {
        case bytes([UInt8])
        case copy(of: String)
    }

    private static func create(_ path: String, _ contents: Contents) throws(PrivateFileError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let error = errno
            if error == EEXIST, isSymbolicLink(path) { throw .symbolicLink(path: path) }
            throw .cannotWrite(path: path, reason: error)
        }
        defer { close(descriptor) }
        do throws(PrivateFileError) {
            // The umask may have taken bits away (never added any): set the mode exactly.
            guard fchmod(descriptor, 0o600) == 0 else { throw .cannotWrite(path: path, reason: errno) }
            try write(contents, to: descriptor, path: path)
        } catch {
            unlink(path)
            throw error
        }
    }

    /// Writes `contents` to `path` as a new 0600 file that takes the place of whatever regular file was there
    /// in one rename: a temporary file with a unique name is created beside it (``create(_:contents:)``),
    /// flushed, and renamed over `path`. Refuses a symbolic link at `path` rather than replace or follow it.
    /// A FIFO or a device (`/dev/null`) is written to as it is, since there is nothing to replace.
    public static func replace(_ path: String, contents: [UInt8]) throws(PrivateFileError) {
        try replace(path, .bytes(contents))
    }

    /// ``replace(_:contents:)`` with the contents of the file at `source`, copied a piece at a time.
    public static func replace(_ path: String, copying source: String) throws(PrivateFileError) {
        try replace(path, .copy(of: source))
    }

    private static func replace(_ path: String, _ contents: Contents) throws(PrivateFileError) {
        var info = stat()
        if lstat(path, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFLNK: throw .symbolicLink(path: path)
            case S_IFREG: break
            case S_IFDIR: throw .cannotWrite(path: path, reason: EISDIR)
            default: return try writeInPlace(path, contents: contents)
            }
        }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var temporary = ""
        for _ in 0..<100 {
            temporary = directory + "/." + url.lastPathComponent + "." + randomSuffix() + ".tmp"
            do {
                try create(temporary, contents)
                break
            } catch .cannotWrite(_, let reason) where reason == EEXIST {
                temporary = ""
                continue
            } catch {
                throw error.about(path)
            }
        }
        guard !temporary.isEmpty else { throw .cannotWrite(path: path, reason: EEXIST) }
        // rename(2) replaces the name, not what it points to: a link planted since the check above is itself
        // replaced, and its target is left alone.
        guard rename(temporary, path) == 0 else {
            let error = errno
            unlink(temporary)
            throw .cannotWrite(path: path, reason: error)
        }
        // The rename is durable once the directory is flushed.
        DescriptorIO.synchronizeDirectory(directory)
    }

    /// Reads the whole of `path`, refusing a symbolic link there.
    public static func read(_ path: String) throws(PrivateFileError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = errno
            throw error == ELOOP ? .symbolicLink(path: path) : .cannotRead(path: path, reason: error)
        }
        defer { close(descriptor) }
        do {
            return try DescriptorIO.readAll(descriptor)
        } catch {
            throw .cannotRead(path: path, reason: error.code)
        }
    }

    private static func writeInPlace(_ path: String, contents: Contents) throws(PrivateFileError) {
        let descriptor = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw .cannotWrite(path: path, reason: errno) }
        defer { close(descriptor) }
        try write(contents, to: descriptor, path: path, flush: false)
    }

    private static func write(_ contents: Contents, to descriptor: Int32, path: String, flush: Bool = true)
        throws(PrivateFileError)
    {
        switch contents {
        case .bytes(let bytes):
            if let failure = bytes.withUnsafeBytes({ DescriptorIO.writeAll($0, to: descriptor) }) {
                throw .cannotWrite(path: path, reason: failure)
            }
        case .copy(let source):
            let input = open(source, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard input >= 0 else { throw .cannotRead(path: source, reason: errno) }
            defer { close(input) }
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw .cannotRead(path: source, reason: errno)
                }
                if count == 0 { break }
                if let failure = buffer.withUnsafeBytes({
                    DescriptorIO.writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<count]), to: descriptor)
                }) {
                    throw .cannotWrite(path: path, reason: failure)
                }
            }
        }
        if flush && fsync(descriptor) != 0 { throw .cannotWrite(path: path, reason: errno) }
    }

    private static func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
    }

    private static func randomSuffix() -> String {
        String(UUID.random().uuidString.prefix(13))
    }
}
