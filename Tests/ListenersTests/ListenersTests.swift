import Foundation
import Testing

@testable import Listeners

@Suite("Listeners: listen addresses as people write them, and TLS files a server cannot use")
struct ListenersTests {
    @Test("HOST:PORT and [IPV6]:PORT are read and written back alike; anything else is nil")
    func listenAddresses() {
        #expect(ListenAddress("127.0.0.1:8080") == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(ListenAddress("[::1]:0") == ListenAddress(host: "::1", port: 0))
        #expect(ListenAddress("localhost:65535")?.description == "localhost:65535")
        #expect(ListenAddress("[::1]:443")?.description == "[::1]:443")
        for bad in ["", "8080", ":8080", "host:", "host:65536", "host:-1", "::1:80", "[::1]80", "[::1", "a:b:c"] {
            #expect(ListenAddress(bad) == nil, "\(bad)")
        }
    }

    @Test("a missing certificate or key file is named, with what to do, before any TLS is tried")
    func missingFiles() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-\(UUID().uuidString)").path
        let error = #expect(throws: TLSFilesError.self) {
            try TLSFiles(certificatePath: missing + ".pem", keyPath: missing + ".key").serverConfiguration()
        }
        #expect(error?.description == "the TLS certificate file \(missing).pem does not exist; check the path")
    }
}
