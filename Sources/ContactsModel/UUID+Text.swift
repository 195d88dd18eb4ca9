import Foundation
import VCard

extension UUID {
    /// The UUID written `text` in the canonical form (`8-4-4-4-12` hex digits, either case), read without
    /// Foundation's `sscanf`; any other text goes to `UUID(uuidString:)`, so that what is accepted does
    /// not change. A sync reads and writes a contact's ID several times, as its record name and its key.
    package init?(canonical text: String) {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var text = text
        let canonical = text.withUTF8 { utf8 -> Bool in
            guard utf8.count == 36 else { return false }
            return withUnsafeMutableBytes(of: &uuid) { bytes in
                var from = 0
                for index in 0..<16 {
                    if from == 8 || from == 13 || from == 18 || from == 23 {
                        guard utf8[from] == UInt8(ascii: "-") else { return false }
                        from += 1
                    }
                    guard let high = utf8[from].hexDigitValue, let low = utf8[from + 1].hexDigitValue else {
                        return false
                    }
                    bytes[index] = high << 4 | low
                    from += 2
                }
                return true
            }
        }
        if canonical {
            self.init(uuid: uuid)
        } else {
            self.init(uuidString: text)
        }
    }

    /// `uuidString` (upper case), written without Foundation's `sprintf`.
    package var canonicalString: String {
        let digits: StaticString = "0123456789ABCDEF"
        return withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { output in
                var to = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        output[to] = UInt8(ascii: "-")
                        to += 1
                    }
                    output[to] = digits.utf8Start[Int(bytes[index] >> 4)]
                    output[to + 1] = digits.utf8Start[Int(bytes[index] & 0xF)]
                    to += 2
                }
                return 36
            }
        }
    }
}
