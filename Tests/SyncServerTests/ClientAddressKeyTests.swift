import NIOCore
import Testing

@testable import SyncServer

/// The one function that keys every per-address limit: IPv6 by its /64, IPv4-mapped IPv6 as the
/// IPv4 address, the Unix socket as one local client.
@Suite("Per-address limit keys")
struct ClientAddressKeyTests {
    @Test(
        "each address counts under its key",
        arguments: [
            ("192.0.2.7", "192.0.2.7"),
            ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
            ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
            ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
            ("::1", "0:0:0:0::/64"),
            ("::ffff:192.0.2.7", "192.0.2.7"),
            ("fe80::1", "fe80:0:0:0::/64"),
        ])
    func keys(_ address: String, _ key: String) {
        #expect(ClientAddressKey.key(forText: address) == key)
    }

    @Test("a Unix socket's peers are one local client; a connection without an address is 'unknown'")
    func local() throws {
        #expect(ClientAddressKey.key(for: try SocketAddress(unixDomainSocketPath: "/tmp/x.sock")) == "local")
        #expect(ClientAddressKey.key(for: nil) == "unknown")
    }

    @Test("a rate limit keyed by it: every address of one /64 shares one bucket; the next /64 has its own")
    func rateLimiterPerPrefix() {
        let limiter = RateLimiter(.init(requestsPerSecond: 0.001, burst: 2))
        let neighbours = ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:abcd::99"]
        let answers = neighbours.map { limiter.acquire(ClientAddressKey.key(forText: $0)) }
        #expect(answers[0] == nil && answers[1] == nil)
        #expect(answers[2] != nil, "the third address of the same /64 is over the burst of 2")
        #expect(limiter.acquire(ClientAddressKey.key(forText: "2001:db8:1:3::1")) == nil)
        // An IPv4 client seen through a dual-stack listener counts with its IPv4 address.
        #expect(limiter.acquire(ClientAddressKey.key(forText: "192.0.2.7")) == nil)
        #expect(limiter.acquire(ClientAddressKey.key(forText: "::ffff:192.0.2.7")) == nil)
        #expect(limiter.acquire(ClientAddressKey.key(forText: "192.0.2.7")) != nil)
    }

    @Test("the connection counter keyed by it: a /64 is one address")
    func connectionCounterPerPrefix() {
        let counter = ConnectionCounter(maximum: 100, maximumPerAddress: 1)
        #expect(counter.admit(from: ClientAddressKey.key(forText: "2001:db8::1")) == nil)
        #expect(counter.admit(from: ClientAddressKey.key(forText: "2001:db8::2")) == .addressFull(limit: 1))
        #expect(counter.admit(from: ClientAddressKey.key(forText: "2001:db8:0:1::1")) == nil)
    }
}
