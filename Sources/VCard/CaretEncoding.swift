/// RFC 6868 caret encoding of parameter values: `^n` is a line break, `^^` a caret and `^'` a
/// double quote. Used for vCard 3.0 too, as Apple's Contacts does.
enum CaretEncoding {
    private static let caret = UInt8(ascii: "^")

    /// Decodes caret escapes; a caret before any other character is kept as written.
    static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        guard bytes.contains(caret) else { return String(decoding: bytes, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            let next = index + 1 < bytes.endIndex ? bytes[index + 1] : nil
            switch (byte, next) {
            case (caret, UInt8(ascii: "n")?), (caret, UInt8(ascii: "N")?):
                out.append(UInt8(ascii: "\n"))
                index += 2
            case (caret, caret?):
                out.append(caret)
                index += 2
            case (caret, UInt8(ascii: "'")?):
                out.append(UInt8(ascii: "\""))
                index += 2
            default:
                out.append(byte)
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends a parameter value to a content line: caret-encoded, and quoted when it holds
    /// `:`, `;` or `,`, which would otherwise end it.
    static func append(_ value: String, to line: inout [UInt8]) {
        let utf8 = value.utf8
        let needsQuotes = utf8.contains {
            $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: ",")
        }
        if needsQuotes { line.append(UInt8(ascii: "\"")) }
        var previous: UInt8 = 0
        for byte in utf8 {
            switch byte {
            case caret: line.append(contentsOf: [caret, caret])
            case UInt8(ascii: "\""): line.append(contentsOf: [caret, UInt8(ascii: "'")])
            case UInt8(ascii: "\r"): line.append(contentsOf: [caret, UInt8(ascii: "n")])
            case UInt8(ascii: "\n"):
                // The LF of a CR LF pair was written with its CR.
                if previous != UInt8(ascii: "\r") { line.append(contentsOf: [caret, UInt8(ascii: "n")]) }
            default: line.append(byte)
            }
            previous = byte
        }
        if needsQuotes { line.append(UInt8(ascii: "\"")) }
    }
}
