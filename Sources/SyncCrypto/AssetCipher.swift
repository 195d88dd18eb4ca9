import Crypto
import Foundation

/// What a device keeps of an asset it encrypted, sealed in the record that names the asset: the
/// asset's own key, the SHA-256 of its ciphertext, and the size of its plaintext.
///
/// Each asset has a key of its own, made fresh when it is encrypted and never used for anything else;
/// the server holds the ciphertext only.
public struct AssetKey: Sendable, Hashable {
    /// The asset's AES-256 key.
    public var key: Data
    /// The SHA-256 of the whole ciphertext, as uploaded.
    public var digest: Data
    /// The bytes of the asset before encryption.
    public var plaintextSize: Int64

    public init(key: Data, digest: Data, plaintextSize: Int64) {
        self.key = key
        self.digest = digest
        self.plaintextSize = plaintextSize
    }

    /// The ciphertext size of `plaintextSize` bytes: each chunk of up to ``AssetCipher/chunkBytes`` gains a
    /// 16-byte tag, and an empty asset is one empty chunk.
    public static func ciphertextSize(ofPlaintext plaintextSize: Int64) -> Int64 {
        let chunks = max(1, (plaintextSize + Int64(AssetCipher.chunkBytes) - 1) / Int64(AssetCipher.chunkBytes))
        return plaintextSize + chunks * Int64(AssetCipher.tagBytes)
    }
}

/// Encryption of an asset in chunks, so that neither side ever holds a whole asset: AES-256-GCM over
/// chunks of 64 KiB, each sealed with its position and whether it is the last as associated data, so
/// that a chunk altered, moved, dropped or cut off fails to open (``AssetDecryptor``).
///
/// The nonce of chunk *n* is *n*: safe because the key encrypts this one asset and nothing else.
public enum AssetCipher {
    /// Plaintext bytes per chunk (the last may hold fewer).
    public static let chunkBytes = 64 * 1024
    /// The bytes GCM adds to each chunk.
    public static let tagBytes = 16

    static func nonce(_ index: UInt64) -> AES.GCM.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        for shift in 0..<8 { bytes[11 - shift] = UInt8(truncatingIfNeeded: index >> (8 * UInt64(shift))) }
        return try! AES.GCM.Nonce(data: bytes)
    }

    static func associatedData(_ index: UInt64, isLast: Bool) -> [UInt8] {
        var data = AssociatedData(purpose: "SyncCrypto.assetChunk")
        data.append(index)
        data.append(UInt8(isLast ? 1 : 0))
        return data.bytes
    }
}

/// Bytes waiting to be cut into chunks of `size`: a chunk leaves only once more bytes follow it, since
/// the last chunk is sealed (and opened) as the last, and which one is last is known only at the end.
struct ChunkBuffer {
    let size: Int
    private var pending: [UInt8] = []

    init(size: Int) { self.size = size }

    /// Adds `bytes`; returns the whole chunks that are not the last.
    mutating func add(_ bytes: some Collection<UInt8>) -> [ArraySlice<UInt8>] {
        pending.append(contentsOf: bytes)
        var chunks: [ArraySlice<UInt8>] = []
        var start = 0
        while pending.count - start > size {
            chunks.append(pending[start..<(start + size)])
            start += size
        }
        if start > 0 { pending.removeFirst(start) }
        return chunks
    }

    /// What is left: the last chunk, possibly empty.
    mutating func rest() -> ArraySlice<UInt8> {
        defer { pending = [] }
        return pending[...]
    }
}

/// Encrypts an asset as its bytes arrive: ``update(_:)`` returns the ciphertext of every chunk it can
/// close, ``finish()`` the last chunk and the ``AssetKey`` to seal in the record.
public struct AssetEncryptor {
    private let key: SymmetricKey
    private var buffer = ChunkBuffer(size: AssetCipher.chunkBytes)
    private var index: UInt64 = 0
    private var plaintextSize: Int64 = 0
    private var hash = SHA256()

    /// An encryptor with a fresh random key.
    public init() {
        self.init(key: SymmetricKey(size: .bits256))
    }

    init(key: SymmetricKey) {
        self.key = key
    }

    /// Takes more plaintext; returns the ciphertext of the chunks it closed (none until more than a
    /// chunk is pending: the last chunk is sealed as the last, by ``finish()``).
    public mutating func update(_ plaintext: some Collection<UInt8>) -> [UInt8] {
        plaintextSize += Int64(plaintext.count)
        return buffer.add(plaintext).flatMap { seal($0, isLast: false) }
    }

    /// Seals what is pending as the last chunk; returns its ciphertext and the asset's key.
    public mutating func finish() -> (ciphertext: [UInt8], key: AssetKey) {
        let last = seal(buffer.rest(), isLast: true)
        let digest = Data(hash.finalize())
        return (last, AssetKey(key: key.withUnsafeBytes { Data($0) }, digest: digest, plaintextSize: plaintextSize))
    }

    private mutating func seal(_ chunk: ArraySlice<UInt8>, isLast: Bool) -> [UInt8] {
        // Sealing with a valid key and nonce cannot fail.
        let box = try! AES.GCM.seal(
            chunk, using: key, nonce: AssetCipher.nonce(index),
            authenticating: AssetCipher.associatedData(index, isLast: isLast))
        index += 1
        let sealed = Array(box.ciphertext) + Array(box.tag)
        hash.update(data: sealed)
        return sealed
    }
}

/// Decrypts an asset as its ciphertext arrives, checking every chunk, the end, the digest and the size.
public struct AssetDecryptor {
    private let key: SymmetricKey
    private let expected: AssetKey
    private var buffer = ChunkBuffer(size: AssetCipher.chunkBytes + AssetCipher.tagBytes)
    private var index: UInt64 = 0
    private var plaintextSize: Int64 = 0
    private var hash = SHA256()

    /// A decryptor for the asset that `key` (from its record) describes.
    /// - Throws: `EncryptionError` `.damaged` when the key is not a 32-byte key.
    public init(key: AssetKey) throws {
        guard key.key.count == 32, key.digest.count == 32 else {
            throw EncryptionError(
                .damaged,
                "the record's key for this asset is damaged (\(key.key.count)-byte key, \(key.digest.count)-byte digest); fetch the record again, or save the asset anew from a device that has it"
            )
        }
        self.key = SymmetricKey(data: key.key)
        self.expected = key
    }

    /// Takes more ciphertext; returns the plaintext of the chunks it could open.
    /// - Throws: `EncryptionError` `.damaged` when a chunk does not open.
    public mutating func update(_ ciphertext: some Collection<UInt8>) throws -> [UInt8] {
        var output: [UInt8] = []
        for chunk in buffer.add(ciphertext) { output += try open(chunk, isLast: false) }
        return output
    }

    /// Opens the last chunk and checks the whole: the digest and the size the record gave.
    /// - Throws: `EncryptionError` `.damaged` when the asset is cut short, altered or another one.
    public mutating func finish() throws -> [UInt8] {
        let rest = buffer.rest()
        guard rest.count >= AssetCipher.tagBytes else { throw Self.damaged("it ends in the middle of a chunk") }
        let last = try open(rest, isLast: true)
        guard Data(hash.finalize()) == expected.digest, plaintextSize == expected.plaintextSize else {
            throw Self.damaged("it is not the asset its record names")
        }
        return last
    }

    private mutating func open(_ sealed: ArraySlice<UInt8>, isLast: Bool) throws -> [UInt8] {
        hash.update(data: sealed)
        let split = sealed.endIndex - AssetCipher.tagBytes
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AssetCipher.nonce(index), ciphertext: sealed[sealed.startIndex..<split], tag: sealed[split...])
            let plain = try AES.GCM.open(
                box, using: key, authenticating: AssetCipher.associatedData(index, isLast: isLast))
            index += 1
            plaintextSize += Int64(plain.count)
            return Array(plain)
        } catch {
            throw Self.damaged(
                isLast
                    ? "its last chunk (\(index)) does not open: altered, or cut short"
                    : "chunk \(index) does not open: altered or out of place")
        }
    }

    private static func damaged(_ what: String) -> EncryptionError {
        EncryptionError(
            .damaged,
            "the asset's content does not open: \(what). The server sent bytes its record's device did not upload; download it again, and if it fails again, save the asset anew from a device that has it"
        )
    }
}
