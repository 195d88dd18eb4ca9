import Foundation
import LocalSystem
import NIOCore
import NIOPosix
import SyncCore

#if canImport(Glibc)
    import Glibc
#endif

/// An asset's file on SQLite's side, written and read on NIO's thread pool (the disk blocks; the
/// server's tasks must not).
final class AssetFile: Sendable {
    private let descriptor: Int32
    private let path: String

    /// Bytes read per chunk handed on.
    static let readChunkBytes = 256 * 1024

    /// Opens `path` (made 0600 when new) to append to it.
    init(appendingTo path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.failure("open \(path) to write", errno) }
        self.descriptor = descriptor
        self.path = path
    }

    /// Cuts the file to `length` when it is longer (bytes written after the last count was stored),
    /// and places the next write at its end. Returns the length it has now, which may be shorter.
    func truncate(toAtMost length: Int64) async throws -> Int64 {
        try await Self.blocking { [descriptor, path] in
            let size: Int64
            do throws(FileStatusError) {
                size = try FileStatus.of(descriptor: descriptor, path: path).size
            } catch {
                throw Self.failure("read the size of \(path)", error.errno)
            }
            let kept = min(length, size)
            guard ftruncate(descriptor, off_t(kept)) == 0, lseek(descriptor, off_t(kept), SEEK_SET) == off_t(kept)
            else { throw Self.failure("cut \(path) to \(kept) bytes", errno) }
            return kept
        }
    }

    func write(_ buffer: ByteBuffer) async throws {
        try await Self.blocking { [descriptor, path] in
            if let failure = buffer.withUnsafeReadableBytes({ DescriptorIO.writeAll($0, to: descriptor) }) {
                throw Self.failure("write to \(path)", failure)
            }
        }
    }

    /// Flushes what was written to the disk, and closes the file.
    func synchronizeAndClose() async throws {
        try await Self.blocking { [descriptor, path] in
            defer { close(descriptor) }
            guard fsync(descriptor) == 0 else { throw Self.failure("flush \(path) to disk", errno) }
        }
    }

    /// Renames a finished file into place and flushes its directory, so that the name survives a crash.
    static func rename(_ from: String, to: String, in directory: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw failure("rename \(from)", errno) }
        DescriptorIO.synchronizeDirectory(directory)
    }

    /// Makes the assets' directory (0700) when it does not exist.
    static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw failure("make the directory \(path)", errno) }
    }

    /// Hands bytes `range` of the file at `path` to `write`, a chunk at a time.
    static func read(_ path: String, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void)
        async throws
    {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open \(path)", errno) }
        defer { close(descriptor) }
        var position = range.lowerBound
        while position < range.upperBound {
            let count = Int(min(Int64(readChunkBytes), range.upperBound - position))
            let at = position
            let buffer = try await blocking {
                var buffer = ByteBufferAllocator().buffer(capacity: count)
                let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { bytes in
                    let read = pread(descriptor, bytes.baseAddress, count, off_t(at))
                    guard read >= 0 else { throw failure("read \(path)", errno) }
                    return read
                }
                guard read > 0 else { throw failure("read \(path): it ends at byte \(at)", 0) }
                return buffer
            }
            try await write(buffer)
            position += Int64(buffer.readableBytes)
        }
    }

    private static func blocking<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws
        -> Result
    {
        try await NIOThreadPool.singleton.runIfActive(work)
    }

    private static func failure(_ what: String, _ code: Int32) -> SyncError {
        SyncError(
            .internalError,
            "the server could not \(what)\(code == 0 ? "" : ": \(String(cString: strerror(code)))"); its operator should check the disk"
        )
    }
}
