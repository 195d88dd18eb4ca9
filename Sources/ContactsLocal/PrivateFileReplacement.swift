import Foundation
import LocalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A private file (``PrivateFile``) written a piece at a time, that takes the place of whatever regular
/// file is at its path only when committed: a reader sees the old file or the new one, never half of one,
/// and a write that fails or is abandoned leaves the old file as it was. The new file is a temporary one
/// with a unique name beside the path, mode 0600, flushed and renamed over the path by ``commit()``. A
/// symbolic link at the path is refused, neither replaced nor followed; a FIFO or a device (`/dev/null`)
/// is written to as it is, since there is nothing to replace.
public final class PrivateFileReplacement {
    let path: String
    let descriptor: Int32
    /// The temporary file renamed over `path` at the commit; nil when writing to a FIFO or a device.
    private var temporary: String?

    public init(_ path: String) throws(PrivateFileError) {
        self.path = path
        if let status = FileStatus.ifPresent(path) {
            switch status.kind {
            case .symbolicLink: throw .symbolicLink(path: path)
            case .regular: break
            case .directory: throw .cannotWrite(path: path, reason: EISDIR)
            default:
                let descriptor = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
                guard descriptor >= 0 else { throw .cannotWrite(path: path, reason: errno) }
                self.descriptor = descriptor
                return
            }
        }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        for _ in 0..<100 {
            let name = directory + "/." + url.lastPathComponent + "." + PrivateFile.randomSuffix() + ".tmp"
            do {
                descriptor = try PrivateFile.openNew(name)
                temporary = name
                return
            } catch .cannotWrite(_, let reason) where reason == EEXIST {
                continue
            } catch {
                throw error.about(path)
            }
        }
        throw .cannotWrite(path: path, reason: EEXIST)
    }

    deinit {
        close(descriptor)
        if let temporary { unlink(temporary) }
    }

    /// Appends `bytes` to the new file.
    public func write(_ bytes: [UInt8]) throws(PrivateFileError) {
        try PrivateFile.write(.bytes(bytes), to: descriptor, path: path)
    }

    /// Flushes the new file and renames it over the path. Without a commit, the path keeps what it had.
    public func commit() throws(PrivateFileError) {
        guard let temporary else { return }
        try PrivateFile.flush(descriptor, path: path)
        // rename(2) replaces the name, not what it points to: a link planted since the check in `init` is
        // itself replaced, and its target is left alone.
        guard rename(temporary, path) == 0 else { throw .cannotWrite(path: path, reason: errno) }
        self.temporary = nil
        // The rename is durable once the directory is flushed.
        DescriptorIO.synchronizeDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }
}
