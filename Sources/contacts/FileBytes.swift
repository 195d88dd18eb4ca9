import Foundation

/// The whole of a file, or of standard input for "-", read straight into one byte array (a large
/// import then holds its input once, not as a `Data` and a copy).
func readBytes(_ path: String) throws -> [UInt8] {
    let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
    func failure() -> CommandFailure {
        CommandFailure("cannot read \(path): \(String(cString: strerror(errno)))")
    }
    guard descriptor >= 0 else { throw failure() }
    defer { if descriptor != STDIN_FILENO { close(descriptor) } }
    var bytes: [UInt8] = []
    var info = stat()
    if fstat(descriptor, &info) == 0 && info.st_mode & S_IFMT == S_IFREG { bytes.reserveCapacity(Int(info.st_size)) }
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count < 0 { throw failure() }
        if count == 0 { return bytes }
        bytes.append(contentsOf: chunk[..<count])
    }
}
