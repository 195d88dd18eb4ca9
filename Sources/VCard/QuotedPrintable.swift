import Foundation

/// Decoding of vCard 2.1 / 3.0 `ENCODING=QUOTED-PRINTABLE` values (RFC 2045 §6.7), written
/// tolerantly: real files get it wrong in many ways.
enum QuotedPrintable {
    /// Whether a property's value is quoted-printable: `ENCODING=QUOTED-PRINTABLE` or a bare
    /// vCard 2.1 `;QUOTED-PRINTABLE`.
    static func isEncoded(_ property: Property) -> Bool {
        property.parameters.contains(where: isEncodingParameter)
    }

    /// Decodes the property's value into plain text (in its `CHARSET`, UTF-8 when it names
    /// none) and drops the `ENCODING` and `CHARSET` parameters, which no longer apply.
    ///
    /// Line breaks in the decoded text become `\n`; nothing else is escaped, because the
    /// semicolons of a quoted-printable N or ADR are its component separators.
    static func decode(_ property: inout Property) {
        let charset = property.parameters.first { $0.name == "CHARSET" }?.values.first
        let text = string(from: decode(Array(property.value.utf8)), charset: charset)
        property.value = TextEscaping.escapingLineBreaks(text)
        property.parameters.removeAll { isEncodingParameter($0) || $0.name == "CHARSET" }
    }

    /// Decodes `=XX` hex escapes and drops a soft line break's `=` left at the end. The reader has
    /// already joined soft-broken lines; an `=` before another `=` is the remains of a soft break
    /// that a writer also folded. Any other stray `=` is kept.
    static func decode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "=") else {
                out.append(byte)
                index += 1
                continue
            }
            if index + 2 < bytes.count, let high = bytes[index + 1].hexDigitValue,
                let low = bytes[index + 2].hexDigitValue
            {
                out.append(high << 4 | low)
                index += 3
            } else if index + 1 == bytes.count || bytes[index + 1] == UInt8(ascii: "=") {
                index += 1
            } else {
                out.append(byte)
                index += 1
            }
        }
        return out
    }

    /// Text from decoded bytes in a charset. UTF-8 that does not validate is read as Latin-1,
    /// the likeliest alternative in old files.
    static func string(from bytes: [UInt8], charset: String?) -> String {
        switch charset?.uppercased() {
        case "ISO-8859-1", "ISO8859-1", "LATIN1", "LATIN-1", "US-ASCII", "ASCII":
            return latin1(bytes)
        case "WINDOWS-1252", "CP1252":
            return String(bytes: bytes, encoding: .windowsCP1252) ?? latin1(bytes)
        default:
            return String(validating: bytes, as: UTF8.self) ?? latin1(bytes)
        }
    }

    private static func latin1(_ bytes: [UInt8]) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: bytes.lazy.map { Unicode.Scalar($0) })
        return String(scalars)
    }

    private static func isEncodingParameter(_ parameter: Parameter) -> Bool {
        switch parameter.name {
        case "ENCODING": parameter.values.contains { $0.uppercased() == "QUOTED-PRINTABLE" }
        case "QUOTED-PRINTABLE": parameter.values.isEmpty
        default: false
        }
    }
}
