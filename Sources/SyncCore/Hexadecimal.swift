/// Bytes written as lowercase hexadecimal digits, and the check that text is such digits: random
/// identifiers, asset IDs, SHA-256 digests.
public enum Hexadecimal {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as `2 × count` lowercase hexadecimal digits.
    public static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `text` is exactly `count` lowercase hexadecimal digits.
    public static func isLowercase(_ text: String, digits count: Int) -> Bool {
        text.utf8.count == count && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
