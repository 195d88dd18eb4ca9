import Crypto
import Foundation

/// The one place that seals and opens with AES-GCM, and reads the small big-endian headers in front of
/// sealed bytes.
enum SealedBytes {
    /// The length of AES-GCM's combined form beyond the plaintext: a 12-byte nonce and a 16-byte tag.
    static let overhead = NonceSource.byteCount + 16

    /// Seals with a fresh random nonce (``NonceSource``) and returns nonce | ciphertext | tag.
    static func seal(
        _ plaintext: Data, using key: SymmetricKey, authenticating associatedData: AssociatedData
    ) -> Data {
        // AES-GCM with a 256-bit key and a 12-byte random nonce fails only for inputs of 64 GiB and more, and
        // `combined` is nil only for nonces of another size: neither can happen here, so a failure is a bug.
        do {
            let box = try AES.GCM.seal(
                plaintext, using: key, nonce: NonceSource.next(), authenticating: associatedData.bytes)
            guard let combined = box.combined else {
                preconditionFailure("AES-GCM sealed box with a non-standard nonce")
            }
            return combined
        } catch {
            preconditionFailure("AES-GCM seal failed: \(error)")
        }
    }

    /// Opens nonce | ciphertext | tag; nil when it is too short or does not authenticate.
    static func open<Bytes: DataProtocol>(
        _ combined: Bytes, using key: SymmetricKey, authenticating associatedData: AssociatedData
    ) -> Data? {
        guard combined.count >= overhead,
            let box = try? AES.GCM.SealedBox(combined: combined),
            let plaintext = try? AES.GCM.open(box, using: key, authenticating: associatedData.bytes)
        else { return nil }
        return plaintext
    }

    /// Reads a big-endian UInt32 at `offset` of `bytes`, which the caller has checked is long enough.
    static func uint32(in bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A key version as it is written (UInt32), refusing one outside 1...UInt32.max.
    static func keyVersion(_ version: Int) throws -> UInt32 {
        guard version >= 1, let written = UInt32(exactly: version) else {
            throw EncryptionError.invalidKeyVersion(version)
        }
        return written
    }

    /// Appends `value` as a big-endian UInt32.
    static func append(_ value: UInt32, to data: inout Data) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }
}
