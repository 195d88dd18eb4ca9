import Crypto
import Foundation

/// What two people compare to know that the public key the server hands out for an account is that
/// account's own: a digest of the key, shown as a safety number of 30 digits (six groups of five, as
/// Signal's per-person half) and as eight proquints for reading aloud. Both come from the same digest
/// and carry about 100 and 128 bits of it: making a key pair whose fingerprint matches another's is
/// out of reach.
public struct KeyFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The digest: SHA-256 over a domain label and the 32 bytes of the X25519 public key.
    public let digest: [UInt8]

    public init(publicKey: Data) {
        var hash = SHA256()
        hash.update(data: Data("cksync account key fingerprint v1".utf8))
        hash.update(data: publicKey)
        digest = Array(hash.finalize())
    }

    /// Six groups of five digits, such as `04417 93026 51190 27745 60312 88514`: each group is 5 bytes of
    /// the digest read as a number, modulo 100,000.
    public var safetyNumber: String {
        (0..<6).map { group in
            var value: UInt64 = 0
            for byte in digest[(group * 5)..<(group * 5 + 5)] { value = value << 8 | UInt64(byte) }
            let digits = String(value % 100_000)
            return String(repeating: "0", count: 5 - digits.count) + digits
        }.joined(separator: " ")
    }

    /// Eight proquints, such as `lusab-babad-gutih-tugad-hikas-lomup-zasiv-nodif`: the digest's first 16 bytes.
    public var words: String { Proquint.encode(digest[0..<16]) }

    public var description: String { safetyNumber }

    /// Whether `text` is this fingerprint, as a safety number (spaces ignored) or as its words (case,
    /// spaces and dashes ignored).
    public func matches(_ text: String) -> Bool {
        let digits = text.filter { !$0.isWhitespace }
        if !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) {
            return digits == safetyNumber.filter { $0 != " " }
        }
        return Proquint.decode(text).map { $0 == Array(digest[0..<16]) } ?? false
    }
}
