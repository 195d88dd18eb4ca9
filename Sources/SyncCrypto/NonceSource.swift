import Crypto
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Fresh random nonces for AES-GCM, read from the kernel's random source 4 KiB at a time (341 nonces in 16
/// system calls), where swift-crypto's own nonce made two calls for each: a few percent of an upload.
///
/// A nonce is no secret (it travels in front of its ciphertext); what AES-GCM needs is that none comes
/// twice under one key. Each is taken out of the buffer once, under a lock. A child made by `fork` would
/// start with a copy of the buffer, so the child's first nonce throws the copy away
/// (``pthread_atfork(_:_:_:)`` counts the forks); `posix_spawn`, which starts the programs this package
/// runs, copies nothing.
package enum NonceSource {
    static let byteCount = 12
    static let bufferByteCount = 4096

    private struct Buffer {
        var bytes: [UInt8] = []
        var next = 0
        /// ``forks`` when the bytes were read.
        var forkCount = 0
    }

    private static let buffer = Mutex(Buffer())
    private static let forks = Atomic<Int>(0)
    private static let countsForks: Void = {
        // The handler only counts: an atomic add is safe in a child that has one thread.
        pthread_atfork(nil, nil) { NonceSource.forks.add(1, ordering: .relaxed) }
    }()

    /// A nonce no other call of this process returns.
    package static func next() -> AES.GCM.Nonce {
        _ = countsForks
        let forkCount = forks.load(ordering: .relaxed)
        let bytes = buffer.withLock { buffer in
            if buffer.next + byteCount > buffer.bytes.count || buffer.forkCount != forkCount {
                buffer.bytes = randomBytes(bufferByteCount)
                buffer.next = 0
                buffer.forkCount = forkCount
            }
            defer { buffer.next += byteCount }
            return buffer.bytes[buffer.next..<buffer.next + byteCount]
        }
        // 12 bytes is the size AES-GCM's nonce takes: this cannot throw.
        return try! AES.GCM.Nonce(data: bytes)
    }

    /// `count` bytes from the kernel's random source, 256 a call (`getentropy`, which reads what `getrandom`
    /// does, without a file that could be something else in a container or a chroot); from the standard
    /// library's generator, 8 bytes a call, where it fails.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        bytes.withUnsafeMutableBytes { buffer in
            while filled < count {
                let length = min(256, count - filled)
                guard getentropy(buffer.baseAddress! + filled, length) == 0 else { break }
                filled += length
            }
        }
        if filled < count {
            var generator = SystemRandomNumberGenerator()
            for index in filled..<count { bytes[index] = generator.next() }
        }
        return bytes
    }
}
