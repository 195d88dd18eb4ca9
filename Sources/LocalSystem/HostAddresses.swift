import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The addresses a host name stands for, and whether one is this machine's alone.
///
/// Whether a listener or a server is reachable only from this machine is a question about addresses, never
/// about how a name is spelled: `127.lan.example.test` is a name like any other, and may resolve to
/// `0.0.0.0`.
public enum HostAddresses {
    /// Every address `host` resolves to (`getaddrinfo`), numeric ("127.0.0.1", "::1"), each once, in the
    /// resolver's order; empty when it does not resolve. A numeric host resolves to itself (`127.1` to
    /// `127.0.0.1`); brackets around an IPv6 address are allowed.
    public static func resolve(_ host: String) -> [String] {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(bare, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var entry = list
        while let info = entry?.pointee {
            if let numeric = numericText(info), !addresses.contains(numeric) { addresses.append(numeric) }
            entry = info.ai_next
        }
        return addresses
    }

    /// Whether the numeric address `address` is a loopback one: 127.0.0.0/8, `::1`, or `::ffff:127.x.y.z`.
    /// A name, or anything else that is not a numeric address, is not.
    public static func isLoopback(numeric address: String) -> Bool {
        let bare =
            address.hasPrefix("[") && address.hasSuffix("]") ? String(address.dropFirst().dropLast()) : address
        var v4 = in_addr()
        if inet_pton(AF_INET, bare, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, bare, &v6) == 1 else { return false }
        return withUnsafeBytes(of: &v6) { bytes in
            let isOne = bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1
            // An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 address it maps.
            let isMapped = bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            return isOne || isMapped && bytes[12] == 127
        }
    }

    /// The text of one resolved address.
    private static func numericText(_ info: addrinfo) -> String? {
        guard let address = info.ai_addr else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch info.ai_family {
        case AF_INET:
            var ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard inet_ntop(AF_INET, &ipv4, &text, socklen_t(text.count)) != nil else { return nil }
        case AF_INET6:
            var ipv6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            guard inet_ntop(AF_INET6, &ipv6, &text, socklen_t(text.count)) != nil else { return nil }
        default:
            return nil
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
