/// The rules every name sent to the server must follow, checked by the server and usable by clients
/// to reject bad input before it leaves the device.
///
/// Each check returns `nil` when the name is fine, or a sentence saying what is wrong.
public enum NameRules {
    /// The longest name, in bytes of UTF-8, as in CloudKit.
    public static let maximumNameBytes = 255

    /// Zone and record names: 1–255 bytes of UTF-8, no control characters, no `/` or `\`,
    /// not `.` or `..`, and no leading `_` (reserved for the server).
    public static func problem(withName name: String, kind: String) -> String? {
        if name.isEmpty { return "\(kind) is empty; give it at least one character" }
        if name.utf8.count > maximumNameBytes {
            return "\(kind) is \(name.utf8.count) bytes long; the limit is \(maximumNameBytes) bytes of UTF-8"
        }
        // Most names are printable ASCII without slashes (UUIDs, mostly): one pass over the bytes clears
        // them of the two checks below, which looked at every scalar's category (7 % of a server's upload).
        let isPlain = name.utf8.allSatisfy { (0x20..<0x7F).contains($0) && $0 != 0x2F && $0 != 0x5C }
        if !isPlain && name.unicodeScalars.contains(where: isControl) {
            return "\(kind) \(quoted(name)) contains a control character; remove it"
        }
        if name == "." || name == ".." || (!isPlain && (name.contains("/") || name.contains("\\"))) {
            return "\(kind) \(quoted(name)) may not be '.' or '..' or contain '/' or '\\'"
        }
        if name.hasPrefix("_") { return "\(kind) \(quoted(name)) starts with '_', which is reserved for the server" }
        return nil
    }

    /// Record types and field keys: 1–255 ASCII letters, digits and underscores, starting with a letter.
    public static func problem(withIdentifier identifier: String, kind: String) -> String? {
        if identifier.isEmpty { return "\(kind) is empty; give it at least one character" }
        if identifier.utf8.count > maximumNameBytes {
            return "\(kind) is \(identifier.utf8.count) bytes long; the limit is \(maximumNameBytes)"
        }
        // Read the UTF-8 in place: records can carry tens of thousands of keys.
        let isLetter = { (byte: UInt8) in (65...90).contains(byte) || (97...122).contains(byte) }
        let isDigit = { (byte: UInt8) in (48...57).contains(byte) }
        let bytes = identifier.utf8
        guard let first = bytes.first, isLetter(first), bytes.allSatisfy({ isLetter($0) || isDigit($0) || $0 == 95 })
        else {
            return "\(kind) \(quoted(identifier)) must start with a letter and hold only ASCII letters, digits and '_'"
        }
        return nil
    }

    /// Usernames: 1–64 characters of ASCII letters, digits, `.`, `_`, `-` and `@`.
    public static func problem(withUsername username: String) -> String? {
        if username.isEmpty { return "username is empty; choose one of 1 to 64 characters" }
        if username.count > 64 { return "username is \(username.count) characters long; the limit is 64" }
        let allowed = username.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || ".-_@".unicodeScalars.contains($0))
        }
        if !allowed {
            return "username \(quoted(username)) may hold only ASCII letters, digits, '.', '-', '_' and '@'"
        }
        return nil
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// Quotes a name for a message, escaping what would not print.
    static func quoted(_ name: String) -> String {
        let shown = name.prefix(60).unicodeScalars.map { scalar -> String in
            isControl(scalar) ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined()
        return "'\(shown)\(name.count > 60 ? "…" : "")'"
    }
}
