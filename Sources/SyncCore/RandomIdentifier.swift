/// Identifiers no one can guess: random bytes from the system's generator, as lowercase hexadecimal.
public enum RandomIdentifier {
    /// `bytes` random bytes as `2 × bytes` lowercase hexadecimal digits.
    public static func hexadecimal(bytes: Int = 16) -> String {
        var generator = SystemRandomNumberGenerator()
        return Hexadecimal.lowercase((0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
