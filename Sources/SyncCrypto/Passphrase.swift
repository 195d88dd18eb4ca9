import Crypto

/// Passphrases made for the person, for accounts set up without asking them for one.
public enum Passphrase {
    /// Crockford's base 32: digits and capitals without I, L, O and U, so nothing reads as something else.
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    /// How many groups, joined by "-".
    static let groupCount = 6
    /// How many characters in each group.
    static let groupLength = 5

    /// A random passphrase of 6 groups of 5 characters, such as `7K2QD-MX9RA-4HW0T-BC8NE-Z5GVJ-P3YKF`:
    /// 30 characters of 5 bits each, 150 bits in all.
    ///
    /// It is checked exactly as typed, hyphens and capitals included.
    public static func generate() -> String {
        // One random byte per character from swift-crypto's generator; 32 divides 256, so keeping the low
        // five bits picks each character with equal chance.
        let random = SymmetricKey(size: SymmetricKeySize(bitCount: groupCount * groupLength * 8))
        let characters = random.withUnsafeBytes { bytes in bytes.map { alphabet[Int($0 & 0x1F)] } }
        let groups = stride(from: 0, to: characters.count, by: groupLength).map {
            String(characters[$0..<$0 + groupLength])
        }
        return groups.joined(separator: "-")
    }
}
