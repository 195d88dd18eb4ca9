/// Identifiers no one can guess: random bytes from the system's generator, as lowercase hexadecimal.
public enum RandomIdentifier {
    /// `bytes` random bytes as `2 × bytes` lowercase hexadecimal digits.
    public static func hexadecimal(bytes: Int = 16) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(2 * bytes)
        for _ in 0..<bytes {
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]]
        }
        return String(decoding: text, as: UTF8.self)
    }
}
