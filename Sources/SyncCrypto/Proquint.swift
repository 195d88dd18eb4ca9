import Foundation

/// Bytes as proquints ("PRO-nounceable QUINT-uplets", Wilkerson 2009): each 16 bits become a five-letter
/// word of alternating consonants and vowels, such as `lusab` or `babad`, that people read aloud, write
/// down and type back without confusing letters. Account key fingerprints and recovery keys are shown so.
public enum Proquint {
    private static let consonants = Array("bdfghjklmnprstvz".utf8)
    private static let vowels = Array("aiou".utf8)

    /// `bytes` (an even number of them) as words joined by `-`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        precondition(bytes.count.isMultiple(of: 2), "proquints encode 16 bits at a time")
        let bytes = Array(bytes)
        var words: [String] = []
        for index in stride(from: 0, to: bytes.count, by: 2) {
            let value = UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
            let letters = [
                consonants[Int(value >> 12 & 0xF)], vowels[Int(value >> 10 & 0x3)], consonants[Int(value >> 6 & 0xF)],
                vowels[Int(value >> 4 & 0x3)], consonants[Int(value & 0xF)],
            ]
            words.append(String(decoding: letters, as: UTF8.self))
        }
        return words.joined(separator: "-")
    }

    /// The bytes of words as ``encode(_:)`` writes them; case, and any spaces, dashes or line breaks
    /// between words, are ignored. Nil when a word is not a proquint.
    public static func decode(_ text: String) -> [UInt8]? {
        let letters = Array(text.lowercased().utf8).filter { !" \t\r\n-_.,".utf8.contains($0) }
        guard !letters.isEmpty, letters.count.isMultiple(of: 5) else { return nil }
        var bytes: [UInt8] = []
        for start in stride(from: 0, to: letters.count, by: 5) {
            guard let c1 = consonants.firstIndex(of: letters[start]),
                let v1 = vowels.firstIndex(of: letters[start + 1]),
                let c2 = consonants.firstIndex(of: letters[start + 2]),
                let v2 = vowels.firstIndex(of: letters[start + 3]),
                let c3 = consonants.firstIndex(of: letters[start + 4])
            else { return nil }
            let value = UInt16(c1) << 12 | UInt16(v1) << 10 | UInt16(c2) << 6 | UInt16(v2) << 4 | UInt16(c3)
            bytes.append(UInt8(value >> 8))
            bytes.append(UInt8(value & 0xFF))
        }
        return bytes
    }
}
