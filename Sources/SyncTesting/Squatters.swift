import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A socket listening on a loopback port, as another user's program would (to collect what is sent
/// there), until released. It accepts nothing by itself: ``connectionsWaiting()`` tells whether anyone
/// connected.
public final class TCPSquatter: Sendable {
    private let descriptor: Int32
    /// The port it listens on (the kernel's choice for port 0).
    public let port: Int

    public init(port: Int) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 8) == 0 else {
            close(descriptor)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
        _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
    }

    /// How many connections were made and not yet accepted (each accepted now, and closed).
    public func connectionsWaiting() -> Int {
        var count = 0
        while case let connection = accept(descriptor, nil, nil), connection >= 0 {
            close(connection)
            count += 1
        }
        return count
    }

    deinit { close(descriptor) }
}

/// A Unix socket listening at a path, as another user's program would, until released.
public final class UnixSquatter: Sendable {
    private let descriptor: Int32

    public init(path: String) throws {
        unlink(path)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(descriptor, 8) == 0 else {
            close(descriptor)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EADDRINUSE)
        }
        _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
        self.descriptor = descriptor
    }

    /// How many connections were made and not yet accepted (each accepted now, and closed).
    public func connectionsWaiting() -> Int {
        var count = 0
        while case let connection = accept(descriptor, nil, nil), connection >= 0 {
            close(connection)
            count += 1
        }
        return count
    }

    deinit { close(descriptor) }
}
