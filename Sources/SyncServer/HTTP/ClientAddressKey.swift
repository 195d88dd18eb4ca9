import NIOCore

/// The key under which a client's address is counted by every per-address limit: the rate limits
/// on account creation and sign-in, the sign-in throttle, and the connection counter.
///
/// - IPv4: the address itself.
/// - IPv6: its /64 prefix (`2001:db8:1:2::/64`). One subscriber, or one machine, is handed a whole
///   /64 and may pick any of its 2^64 addresses for each connection; counting addresses one by one
///   would give it 2^64 budgets.
/// - IPv4-mapped IPv6 (`::ffff:192.0.2.1`, what a dual-stack listener sees of an IPv4 client): the
///   IPv4 address, so that one client counts once whichever way it came.
/// - A Unix domain socket: ``local``. Its peers have no address; only users who may open the
///   socket's directory can connect, and they share one budget, as they would on 127.0.0.1.
enum ClientAddressKey {
    /// The key of clients on the Unix domain socket.
    static let local = "local"
    /// The key of a connection whose peer address is not known (it closed before it was asked).
    static let unknown = "unknown"

    /// The key of a connection's peer.
    static func key(for address: SocketAddress?) -> String {
        guard let address else { return unknown }
        switch address {
        case .v4:
            // sockaddr_in: family (2 bytes), port (2), the address (4), in network order.
            return key(ipv4: bytes(of: address, offset: 4, count: 4))
        case .v6:
            // sockaddr_in6: family (2 bytes), port (2), flow information (4), the address (16).
            return key(ipv6: bytes(of: address, offset: 8, count: 16))
        case .unixDomainSocket:
            return local
        }
    }

    /// `count` bytes of the socket address structure, from `offset`.
    private static func bytes(of address: SocketAddress, offset: Int, count: Int) -> [UInt8] {
        address.withSockAddr { pointer, size in
            guard offset + count <= size else { return [UInt8](repeating: 0, count: count) }
            let raw = UnsafeRawPointer(pointer)
            return (0..<count).map { raw.load(fromByteOffset: offset + $0, as: UInt8.self) }
        }
    }

    /// The key of an address written as text (`192.0.2.1`, `2001:db8::1`); text that is no IP
    /// address is its own key.
    static func key(forText text: String) -> String {
        guard let address = try? SocketAddress(ipAddress: text, port: 0) else { return text }
        return key(for: address)
    }

    /// Four bytes in network order.
    private static func key(ipv4 bytes: [UInt8]) -> String {
        bytes.map(String.init).joined(separator: ".")
    }

    /// Sixteen bytes in network order.
    private static func key(ipv6 bytes: [UInt8]) -> String {
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return key(ipv4: Array(bytes[12..<16]))
        }
        let groups = stride(from: 0, to: 8, by: 2).map {
            String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
        }
        return groups.joined(separator: ":") + "::/64"
    }
}
