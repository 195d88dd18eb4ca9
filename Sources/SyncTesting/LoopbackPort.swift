import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Ports for tests that choose the port a server listens on, such as a test that stops a server and
/// starts it again on the same port.
public enum LoopbackPort {
    /// A port of 127.0.0.1 that nothing is bound to now, picked at random below the kernel's ephemeral
    /// range: no outgoing connection and no server started on port 0 can take it while the test's
    /// server is down, and tests running in parallel are unlikely to pick the same one.
    public static func unused() throws -> Int {
        let ephemeralStart = ephemeralRange()?.lowerBound ?? 32_768
        let candidates = 10_000..<max(10_001, min(ephemeralStart, 30_000))
        for _ in 0..<200 {
            let port = Int.random(in: candidates)
            if isFree(port) { return port }
        }
        throw POSIXError(.EADDRINUSE)
    }

    /// Whether a listening socket could be bound to 127.0.0.1:`port` now.
    public static func isFree(_ port: Int) -> Bool {
        withLoopbackAddress(port) { bind($0, $1, $2) == 0 }
    }

    /// Whether something accepts connections on 127.0.0.1:`port` now.
    public static func isListening(_ port: Int) -> Bool {
        withLoopbackAddress(port) { connect($0, $1, $2) == 0 }
    }

    /// Calls `body` with a new TCP socket and the address 127.0.0.1:`port`; closes the socket after.
    private static func withLoopbackAddress(
        _ port: Int, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool
    ) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// The range the kernel picks ports from for port 0 and outgoing connections, from
    /// `/proc/sys/net/ipv4/ip_local_port_range`.
    static func ephemeralRange() -> ClosedRange<Int>? {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        else { return nil }
        let numbers = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard numbers.count == 2, numbers[0] <= numbers[1] else { return nil }
        return numbers[0]...numbers[1]
    }
}
