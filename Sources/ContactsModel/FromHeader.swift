import Foundation

/// A message's `From:` header (RFC 5322): its sender, with encoded words (RFC 2047) in the
/// display name decoded: the person to add to an address book from a message they sent.
public struct FromHeader: Sendable, Hashable {
    public var name: String
    public var address: String

    /// Reads the sender from a message's header section (the text up to the first empty line; folded
    /// lines are unfolded). Throws, saying what is missing, when there is no usable `From:`.
    public init(message: String) throws {
        guard let field = Self.header("From", in: message) else {
            throw DeviceError.noFromHeader
        }
        try self.init(fromField: field)
    }

    /// Reads `Name <address>`, `"Quoted, Name" <address>`, `address (Name)` or a bare address.
    public init(fromField raw: String) throws {
        let field = raw.trimmingCharacters(in: .whitespaces)
        var name = ""
        var address = ""
        if let open = field.lastIndex(of: "<"), let close = field[open...].firstIndex(of: ">") {
            address = String(field[field.index(after: open)..<close])
            name = String(field[..<open])
        } else if let open = field.firstIndex(of: "("), let close = field.lastIndex(of: ")"), open < close {
            address = String(field[..<open])
            name = String(field[field.index(after: open)..<close])
        } else {
            address = field
        }
        address = address.trimmingCharacters(in: .whitespaces)
        name = Self.decodeWords(name.trimmingCharacters(in: .whitespaces))
        if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
            name = String(name.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
                .replacingOccurrences(of: "\\\\", with: "\\")
        }
        guard let at = address.lastIndex(of: "@"), at != address.startIndex,
            address.index(after: at) != address.endIndex,
            !address.contains(where: { $0.isWhitespace || $0 == "<" || $0 == ">" || $0 == "," })
        else {
            throw DeviceError.noSingleAddress(String(raw.prefix(200)))
        }
        self.address = address
        self.name = name.trimmingCharacters(in: .whitespaces)
    }

    /// The value of the first header named `name`, unfolded; nil when the message has none.
    static func header(_ name: String, in message: String) -> String? {
        var value: String?
        for line in message.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            if line.isEmpty { break }
            if let current = value {
                // A folded line continues the field; any other line ends it.
                guard line.first == " " || line.first == "\t" else { return current }
                value = current + " " + line.trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].trimmingCharacters(in: .whitespaces).lowercased() == name.lowercased() {
                value = String(line[line.index(after: colon)...])
            }
        }
        return value
    }

    /// Decodes RFC 2047 encoded words (`=?UTF-8?B?…?=`, `=?ISO-8859-1?Q?…?=`); white space between two
    /// encoded words is dropped, as the RFC says. A word in a charset this does not know is left as it is.
    static func decodeWords(_ text: String) -> String {
        var result = ""
        var pendingSpace = ""
        var lastWasEncoded = false
        var rest = Substring(text)
        while !rest.isEmpty {
            if rest.hasPrefix("=?"), let decoded = decodeWord(&rest) {
                if !lastWasEncoded { result += pendingSpace }
                pendingSpace = ""
                result += decoded
                lastWasEncoded = true
                continue
            }
            let character = rest.removeFirst()
            if character == " " || character == "\t" {
                pendingSpace.append(character)
                continue
            }
            result += pendingSpace
            pendingSpace = ""
            result.append(character)
            lastWasEncoded = false
        }
        return result + pendingSpace
    }

    /// Decodes the encoded word at the start of `rest` and moves past it; nil (and `rest` unchanged) when
    /// it is not one this can decode.
    private static func decodeWord(_ rest: inout Substring) -> String? {
        let parts = rest.dropFirst(2).split(separator: "?", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, parts[3].hasPrefix("="), parts[0].count > 0 else { return nil }
        let charset = parts[0].lowercased().split(separator: "*").first.map(String.init) ?? ""
        let encoding = parts[1].uppercased()
        let payload = parts[2]
        var bytes: [UInt8]
        switch encoding {
        case "B":
            var base64 = String(payload)
            while base64.count % 4 != 0 { base64 += "=" }
            guard let data = Data(base64Encoded: base64) else { return nil }
            bytes = Array(data)
        case "Q":
            bytes = []
            var utf8 = Array(payload.utf8)[...]
            while let byte = utf8.first {
                utf8 = utf8.dropFirst()
                if byte == UInt8(ascii: "_") {
                    bytes.append(0x20)
                } else if byte == UInt8(ascii: "="), utf8.count >= 2,
                    let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
                {
                    bytes.append(value)
                    utf8 = utf8.dropFirst(2)
                } else {
                    bytes.append(byte)
                }
            }
        default: return nil
        }
        let decoded: String?
        switch charset {
        case "utf-8", "utf8", "us-ascii": decoded = String(validating: bytes, as: UTF8.self)
        case "iso-8859-1", "latin1", "iso-8859-15", "windows-1252":
            decoded = String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default: decoded = nil
        }
        guard let decoded else { return nil }
        // "=?" + charset "?" encoding "?" payload "?=".
        rest = rest.dropFirst(2 + parts[0].count + 1 + parts[1].count + 1 + payload.count + 2)
        return decoded
    }
}
