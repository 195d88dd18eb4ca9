/// Backslash escaping of vCard TEXT values (RFC 6350 §3.4, RFC 2426 §5): `\\`, `\,`, `\;` and
/// `\n` (or `\N`) for a line break.
///
/// Works on UTF-8 bytes: every byte it looks at is ASCII, so multi-byte characters pass through
/// untouched, and a value without backslashes costs one scan.
enum TextEscaping {
    private static let backslash = UInt8(ascii: "\\")
    private static let comma = UInt8(ascii: ",")
    private static let semicolon = UInt8(ascii: ";")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let lineFeed = UInt8(ascii: "\n")

    /// Escapes text for a value: backslashes, commas, semicolons and line breaks (CR LF, CR or LF,
    /// each written as `\n`).
    static func escape(_ text: some StringProtocol) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == backslash || $0 == comma || $0 == semicolon || isLineBreak($0) }) else {
            return String(text)
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 8)
        var previous: UInt8 = 0
        for byte in utf8 {
            switch byte {
            case backslash, comma, semicolon:
                out.append(backslash)
                out.append(byte)
            case carriageReturn:
                out.append(backslash)
                out.append(UInt8(ascii: "n"))
            case lineFeed:
                // The LF of a CR LF pair was written with its CR.
                if previous != carriageReturn {
                    out.append(backslash)
                    out.append(UInt8(ascii: "n"))
                }
            default:
                out.append(byte)
            }
            previous = byte
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Undoes ``escape(_:)``. Also reads `\:` as `:` (Apple's vCard 3.0 writes `http\://`); any
    /// other backslash is kept, so a Windows path survives.
    static func unescape(_ raw: some StringProtocol) -> String {
        let utf8 = raw.utf8
        guard utf8.contains(backslash) else { return String(raw) }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var escaping = false
        for byte in utf8 {
            if escaping {
                escaping = false
                switch byte {
                case backslash, comma, semicolon, UInt8(ascii: ":"): out.append(byte)
                case UInt8(ascii: "n"), UInt8(ascii: "N"): out.append(lineFeed)
                default:
                    out.append(backslash)
                    out.append(byte)
                }
            } else if byte == backslash {
                escaping = true
            } else {
                out.append(byte)
            }
        }
        if escaping { out.append(backslash) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Splits a structured value (N, ADR, ORG) at unescaped `;` into components and each component
    /// at unescaped `,` into values, then unescapes every value. An empty value is `[[""]]`.
    static func components(of raw: String) -> [[String]] {
        var components: [[String]] = []
        var current: [String] = []
        let utf8 = raw.utf8
        var start = utf8.startIndex
        var index = start
        var escaped = false
        while index != utf8.endIndex {
            let byte = utf8[index]
            if escaped {
                escaped = false
            } else if byte == backslash {
                escaped = true
            } else if byte == comma || byte == semicolon {
                current.append(unescape(raw[start..<index]))
                if byte == semicolon {
                    components.append(current)
                    current = []
                }
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        current.append(unescape(raw[start..<index]))
        components.append(current)
        return components
    }

    /// Writes components as ``components(of:)`` reads them: values escaped, joined with `,`, and
    /// components joined with `;`.
    static func value(ofComponents components: [[String]]) -> String {
        components.map { $0.map(escape).joined(separator: ",") }.joined(separator: ";")
    }

    /// Writes every raw line break in an unescaped value as `\n`: a content line cannot hold one.
    static func escapingLineBreaks(_ value: String) -> String {
        guard value.utf8.contains(where: isLineBreak) else { return value }
        return replacingLineBreaks(in: value, with: "\\n")
    }

    /// Turns CR LF and lone CR into LF.
    static func normalizingLineBreaks(_ text: String) -> String {
        guard text.utf8.contains(carriageReturn) else { return text }
        return replacingLineBreaks(in: text, with: "\n")
    }

    private static func replacingLineBreaks(in text: String, with replacement: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 8)
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if byte == carriageReturn || (byte == lineFeed && previous != carriageReturn) {
                out.append(contentsOf: replacement.utf8)
            } else if byte != lineFeed {
                out.append(byte)
            }
            previous = byte
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isLineBreak(_ byte: UInt8) -> Bool {
        byte == carriageReturn || byte == lineFeed
    }
}
