import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension UUID {
    /// A random (version 4) UUID from the system's generator. Foundation's `UUID()` opens
    /// `/dev/urandom` for each one on Linux, which took a tenth of an import; the bytes come from
    /// ``RandomBytes``, a read for 256 UUIDs.
    public static func random() -> UUID {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            RandomBytes.shared.withLock { $0.take(into: bytes) }
            bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
            bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
        }
        return UUID(uuid: uuid)
    }
}

/// Bytes from the system's generator (`/dev/urandom`), read 4 KiB at a time and each handed out once. An
/// import makes a UUID for every email, phone and address it reads; `SystemRandomNumberGenerator` made a
/// system call for every 8 bytes of them (a twentieth of an import). A process forked without `exec`
/// would share the unused bytes; nothing here forks but to run another program.
struct RandomBytes: ~Copyable {
    static let shared = Mutex(RandomBytes())

    private var buffer = [UInt8](repeating: 0, count: 4096)
    private var used = 4096

    /// Fills `output` with bytes no one was given before.
    mutating func take(into output: UnsafeMutableRawBufferPointer) {
        var filled = 0
        while filled < output.count {
            if used == buffer.count { refill() }
            let count = min(output.count - filled, buffer.count - used)
            buffer.withUnsafeBytes { bytes in
                output.baseAddress!.advanced(by: filled).copyMemory(
                    from: bytes.baseAddress!.advanced(by: used), byteCount: count)
            }
            filled += count
            used += count
        }
    }

    private mutating func refill() {
        buffer.withUnsafeMutableBytes { bytes in
            var filled = 0
            let urandom = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
            if urandom >= 0 {
                defer { close(urandom) }
                while filled < bytes.count {
                    let count = read(urandom, bytes.baseAddress! + filled, bytes.count - filled)
                    if count > 0 { filled += count } else if count == 0 || errno != EINTR { break }
                }
            }
            // No /dev/urandom to read (a sandbox): the standard library's generator, eight bytes a call.
            var generator = SystemRandomNumberGenerator()
            while filled < bytes.count {
                let word = generator.next() as UInt64
                let count = min(8, bytes.count - filled)
                withUnsafeBytes(of: word) { word in
                    (bytes.baseAddress! + filled).copyMemory(from: word.baseAddress!, byteCount: count)
                }
                filled += count
            }
        }
        used = 0
    }
}
