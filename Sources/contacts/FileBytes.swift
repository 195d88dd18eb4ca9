import Foundation
import LocalSystem

/// A file to read, or standard input for "-": opened when made (so that a missing file is reported
/// before anything is imported), read whole or a piece at a time straight into byte arrays.
final class InputFile {
    let path: String
    /// The size of a regular file; nil for standard input, a pipe or a device.
    let size: Int?
    private let descriptor: Int32

    init(_ path: String) throws {
        self.path = path
        descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Self.failure(path) }
        let status = try? FileStatus.of(descriptor: descriptor, path: path)
        size = status.flatMap { $0.kind == .regular ? Int($0.size) : nil }
    }

    deinit {
        if descriptor != STDIN_FILENO { close(descriptor) }
    }

    /// The rest of the file.
    func readAll() throws -> [UInt8] {
        var bytes: [UInt8] = []
        if let size { bytes.reserveCapacity(size) }
        while true {
            let piece = try read(upTo: 1 << 20)
            if piece.isEmpty { return bytes }
            bytes += piece
        }
    }

    /// Up to `count` more bytes; none at the end of the file.
    func read(upTo count: Int) throws -> [UInt8] {
        var piece = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = piece.withUnsafeMutableBytes {
                Foundation.read(descriptor, $0.baseAddress! + filled, count - filled)
            }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw Self.failure(path) }
            if got == 0 { break }
            filled += got
        }
        piece.removeLast(count - filled)
        return piece
    }

    private static func failure(_ path: String) -> CommandFailure {
        CommandFailure("cannot read \(path): \(String(cString: strerror(errno)))")
    }
}
