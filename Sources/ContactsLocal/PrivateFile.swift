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
        let descriptor = try openNew(path)
        defer { close(descriptor) }
        do throws(PrivateFileError) {
            try write(contents, to: descriptor, path: path)
            try flush(descriptor, path: path)
        } catch {
            unlink(path)
            throw error
        }
    }

    /// Creates `path`, which must not exist, with mode 0600 exactly, and opens it for writing.
    static func openNew(_ path: String) throws(PrivateFileError) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let error = errno
            if error == EEXIST, isSymbolicLink(path) { throw .symbolicLink(path: path) }
            throw .cannotWrite(path: path, reason: error)
        }
        // The umask may have taken bits away (never added any): set the mode exactly.
        guard fchmod(descriptor, 0o600) == 0 else {
            let error = errno
            close(descriptor)
            unlink(path)
            throw .cannotWrite(path: path, reason: error)
        }
        return descriptor
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
        let replacement = try PrivateFileReplacement(path)
        try write(contents, to: replacement.descriptor, path: path)
        try replacement.commit()
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

    static func write(_ contents: Contents, to descriptor: Int32, path: String) throws(PrivateFileError) {
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
    }

    /// Writes what is written to `descriptor` to the disk.
    static func flush(_ descriptor: Int32, path: String) throws(PrivateFileError) {
        if fsync(descriptor) != 0 { throw .cannotWrite(path: path, reason: errno) }
    }

    static func isSymbolicLink(_ path: String) -> Bool {
        FileStatus.ifPresent(path)?.kind == .symbolicLink
    }

    static func randomSuffix() -> String {
        String(UUID.random().uuidString.prefix(13))
    }
}
