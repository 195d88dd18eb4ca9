import LocalSystem
import Testing

@Suite("HostAddresses: what a host resolves to, and whether an address is this machine's alone")
struct HostAddressesTests {
    @Test("numeric hosts resolve to themselves, short and bracketed forms included; localhost to loopback addresses")
    func resolve() {
        #expect(HostAddresses.resolve("127.0.0.1") == ["127.0.0.1"])
        #expect(HostAddresses.resolve("127.1") == ["127.0.0.1"], "inet_aton's short form")
        #expect(HostAddresses.resolve("[::1]") == ["::1"])
        #expect(HostAddresses.resolve("0.0.0.0") == ["0.0.0.0"])
        let localhost = HostAddresses.resolve("localhost")
        #expect(!localhost.isEmpty && localhost.allSatisfy(HostAddresses.isLoopback(numeric:)), "\(localhost)")
    }

    @Test("loopback is 127.0.0.0/8, ::1 and IPv4-mapped 127.x; every other address, and any name, is not")
    func loopback() {
        for address in ["127.0.0.1", "127.255.0.9", "::1", "[::1]", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"] {
            #expect(HostAddresses.isLoopback(numeric: address), "\(address)")
        }
        for address in [
            "0.0.0.0", "::", "128.0.0.1", "10.0.0.1", "::ffff:10.0.0.1", "::2", "localhost", "127.lan.example.test", "",
        ] {
            #expect(!HostAddresses.isLoopback(numeric: address), "\(address)")
        }
    }
}
