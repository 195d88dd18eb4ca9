import Foundation
import VCard

extension UUID {
    /// The UUID written `text` in the canonical form (`8-4-4-4-12` hex digits, either case), read without
    /// Foundation's `sscanf`; any other text goes to `UUID(uuidString:)`, so that what is accepted does
    /// not change. A sync reads and writes a contact's ID several times, as its record name and its key.
    package init?(canonical text: String) {
        var text = text
        if let uuid = text.withUTF8({
            $0.count == 36 ? Self.hexBytes(UnsafeRawBufferPointer($0), from: 0, dashed: true) : nil
        }) {
            self.init(uuid: uuid)
        } else {
            self.init(uuidString: text)
        }
    }

    /// The UUID whose ``canonicalString`` is exactly `text`, read from the bytes themselves; nil for any other
    /// text, the canonical form in lower case included.
    package init?(canonicalText text: UnsafeRawBufferPointer) {
        guard text.count == 36, !text.contains(where: { (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }),
            let uuid = Self.hexBytes(text, from: 0, dashed: true)
        else { return nil }
        self.init(uuid: uuid)
    }

    /// The UUID written as 32 hex digits without dashes, in either case.
    package init?(hexDigits text: String) {
        var text = text
        guard
            let uuid = text.withUTF8({
                $0.count == 32 ? Self.hexBytes(UnsafeRawBufferPointer($0), from: 0, dashed: false) : nil
            })
        else { return nil }
        self.init(uuid: uuid)
    }

    /// `uuidString` (upper case), written without Foundation's `sprintf`.
    package var canonicalString: String { hexString(prefix: nil, digits: "0123456789ABCDEF", dashed: true) }

    /// The UUID of a user record name as the server makes them (``userRecordName``: `_` and 32 lower-case
    /// hex digits); nil for any other name, so that the name is written back byte for byte.
    package init?(userRecordName name: String) {
        var name = name
        let read = name.withUTF8 { utf8 in
            utf8.count == 33 && utf8[0] == UInt8(ascii: "_")
                ? Self.hexBytes(UnsafeRawBufferPointer(utf8), from: 1, dashed: false) : nil
        }
        guard let read else { return nil }
        self.init(uuid: read)
        guard userRecordName == name else { return nil }
    }

    /// `_` and the 32 lower-case hex digits: how the server names the user records it makes.
    package var userRecordName: String {
        hexString(prefix: UInt8(ascii: "_"), digits: "0123456789abcdef", dashed: false)
    }

    /// The 16 bytes written as hex digits in `utf8` from `from`, with the canonical form's dashes when
    /// `dashed`; nil when anything else is there.
    private static func hexBytes(_ utf8: UnsafeRawBufferPointer, from start: Int, dashed: Bool) -> uuid_t? {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let read = withUnsafeMutableBytes(of: &uuid) { bytes in
            var from = start
            for index in 0..<16 {
                if dashed && (index == 4 || index == 6 || index == 8 || index == 10) {
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
        return read ? uuid : nil
    }

    /// The 16 bytes as hex `digits`, after `prefix` when given, with the canonical form's dashes when `dashed`.
    private func hexString(prefix: UInt8?, digits: StaticString, dashed: Bool) -> String {
        let length = (prefix == nil ? 0 : 1) + 32 + (dashed ? 4 : 0)
        return withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: length) { output in
                var to = 0
                if let prefix {
                    output[0] = prefix
                    to = 1
                }
                for index in 0..<16 {
                    if dashed && (index == 4 || index == 6 || index == 8 || index == 10) {
                        output[to] = UInt8(ascii: "-")
                        to += 1
                    }
                    output[to] = digits.utf8Start[Int(bytes[index] >> 4)]
                    output[to + 1] = digits.utf8Start[Int(bytes[index] & 0xF)]
                    to += 2
                }
                return length
            }
        }
    }
}
