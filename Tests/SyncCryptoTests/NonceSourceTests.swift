import Crypto
import Foundation
import Testing

@testable import SyncCrypto

/// AES-GCM fails open when a nonce comes twice under one key: the nonces read from the kernel a buffer at a
/// time must still never repeat, across refills and across threads, and each seal must carry its own.
@Suite struct NonceSourceTests {
    static func bytes(_ nonce: AES.GCM.Nonce) -> [UInt8] { nonce.withUnsafeBytes(Array.init) }

    @Test("nonces taken over many refills of the buffer are 12 bytes each and never repeat")
    func noRepeatsAcrossRefills() {
        // Thirty buffers' worth, so that a refill that handed out old bytes again would show.
        let count = NonceSource.bufferByteCount / NonceSource.byteCount * 30
        let nonces = (0..<count).map { _ in Self.bytes(NonceSource.next()) }
        #expect(nonces.allSatisfy { $0.count == 12 })
        #expect(Set(nonces).count == count, "\(count - Set(nonces).count) nonces came twice")
    }

    @Test("nonces taken by many tasks at once never repeat")
    func noRepeatsAcrossThreads() async {
        let perTask = 2_000
        let nonces = await withTaskGroup(of: [[UInt8]].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<perTask).map { _ in Self.bytes(NonceSource.next()) } }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(nonces.count == 8 * perTask)
        #expect(Set(nonces).count == nonces.count, "\(nonces.count - Set(nonces).count) nonces came twice")
    }

    @Test("the kernel's bytes fill the whole buffer, past the 256 bytes one call gives")
    func randomBytesFillTheBuffer() {
        let first = NonceSource.randomBytes(5_000)
        let second = NonceSource.randomBytes(5_000)
        #expect(first.count == 5_000 && second.count == 5_000)
        // A tail left as the zeros it started as would show here: 64 zero bytes in a row from a random
        // source happen with odds of 2^-512.
        #expect(first.suffix(64).contains { $0 != 0 } && second.suffix(64).contains { $0 != 0 })
        #expect(first != second)
    }

    @Test("each seal of one value carries a nonce of its own, at the front of AES-GCM's combined form")
    func sealsCarryTheirOwnNonce() throws {
        let cipher = FieldCipher(zoneKey: try ZoneKey(rawBytes: Data(repeating: 7, count: 32), version: 1))
        let sealed = (0..<1_000).map { _ in
            cipher.seal(
                Data("the same value".utf8), recordVersion: 1, recordType: "Contact", recordName: "c",
                zoneName: "Contacts", ownerName: "_a", fieldName: "f")
        }
        let nonces = sealed.map { Array($0.dropFirst(FieldCipher.headerByteCount).prefix(12)) }
        #expect(Set(nonces).count == sealed.count)
        #expect(Set(sealed).count == sealed.count)
        for box in sealed {
            let opened = try cipher.open(
                box, recordType: "Contact", recordName: "c", zoneName: "Contacts", ownerName: "_a", fieldName: "f")
            #expect(opened.value == Data("the same value".utf8) && opened.recordVersion == 1)
        }
    }
}
