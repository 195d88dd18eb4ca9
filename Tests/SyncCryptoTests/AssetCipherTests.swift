import Foundation
import SyncCrypto
import Testing

@Suite("Assets encrypted in chunks: every size round-trips; altered, moved, dropped or cut chunks fail to open")
struct AssetCipherTests {
    static let chunk = AssetCipher.chunkBytes

    /// Encrypts `plaintext` fed in pieces of `piece` bytes.
    static func encrypt(_ plaintext: [UInt8], piece: Int) -> (ciphertext: [UInt8], key: AssetKey) {
        var encryptor = AssetEncryptor()
        var ciphertext: [UInt8] = []
        var start = 0
        while start < plaintext.count {
            let end = min(plaintext.count, start + piece)
            ciphertext += encryptor.update(plaintext[start..<end])
            start = end
        }
        let (last, key) = encryptor.finish()
        return (ciphertext + last, key)
    }

    static func decrypt(_ ciphertext: [UInt8], key: AssetKey, piece: Int) throws -> [UInt8] {
        var decryptor = try AssetDecryptor(key: key)
        var plaintext: [UInt8] = []
        var start = 0
        while start < ciphertext.count {
            let end = min(ciphertext.count, start + piece)
            plaintext += try decryptor.update(ciphertext[start..<end])
            start = end
        }
        return plaintext + (try decryptor.finish())
    }

    static func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    @Test(
        "sizes around the chunk's, fed in any pieces, come back byte for byte at the size the key predicts",
        arguments: [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk + 5], [1000, chunk, 3 * chunk])
    func roundTrip(size: Int, piece: Int) throws {
        let plaintext = Self.bytes(size)
        let (ciphertext, key) = Self.encrypt(plaintext, piece: piece)
        #expect(Int64(ciphertext.count) == AssetKey.ciphertextSize(ofPlaintext: Int64(size)))
        #expect(key.plaintextSize == Int64(size))
        #expect(try Self.decrypt(ciphertext, key: key, piece: 7919) == plaintext)
    }

    @Test("each asset has a key of its own: the same bytes twice give two ciphertexts, and one key opens only its own")
    func freshKeys() throws {
        let plaintext = Self.bytes(5000)
        let first = Self.encrypt(plaintext, piece: 5000)
        let second = Self.encrypt(plaintext, piece: 5000)
        #expect(first.ciphertext != second.ciphertext)
        #expect(first.key.key != second.key.key)
        #expect(throws: EncryptionError.self) { try Self.decrypt(second.ciphertext, key: first.key, piece: 5000) }
    }

    /// What a hostile or broken server may do to the bytes, and that each is refused as damaged.
    @Test(
        "a changed byte, swapped chunks, a dropped last chunk, a cut in a chunk, extra bytes, and another asset's digest all fail with a clear error"
    )
    func tampering() throws {
        let plaintext = Self.bytes(3 * Self.chunk + 100)
        let (ciphertext, key) = Self.encrypt(plaintext, piece: 10_000)
        let sealed = Self.chunk + AssetCipher.tagBytes
        var flipped = ciphertext
        flipped[sealed + 10] ^= 1
        let chunks = stride(from: 0, to: ciphertext.count, by: sealed).map {
            Array(ciphertext[$0..<min(ciphertext.count, $0 + sealed)])
        }
        let swapped = chunks[1] + chunks[0] + chunks[2] + chunks[3]
        let dropped = Array(chunks[0..<3].joined())
        let cut = Array(ciphertext.dropLast(50))
        let extra = ciphertext + [0, 1, 2]
        var otherDigest = key
        otherDigest.digest = Data(repeating: 7, count: 32)
        for (what, bytes, key) in [
            ("a changed byte", flipped, key), ("swapped chunks", swapped, key),
            ("the last chunk dropped", dropped, key),
            ("cut inside the last chunk", cut, key), ("bytes added", extra, key),
            ("another digest", ciphertext, otherDigest),
        ] {
            let error = #expect(throws: EncryptionError.self, "\(what)") {
                try Self.decrypt(bytes, key: key, piece: 4096)
            }
            #expect(error?.code == .damaged, "\(what)")
            #expect(error?.message.contains("download it again") == true, "\(what): \(error?.message ?? "")")
        }
    }

    @Test("a key that is not 32 bytes is refused before any byte is read")
    func damagedKey() {
        let key = AssetKey(key: Data(repeating: 1, count: 5), digest: Data(repeating: 0, count: 32), plaintextSize: 1)
        #expect(throws: EncryptionError.self) { _ = try AssetDecryptor(key: key) }
    }
}
