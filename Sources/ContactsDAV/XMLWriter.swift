/// The namespaces of the bridge's answers, and the prefixes it writes them with.
enum Namespace {
    static let dav = "DAV:"
    static let cardDAV = "urn:ietf:params:xml:ns:carddav"
    static let calendarServer = "http://calendarserver.org/ns/"

    static let prefixes = [dav: "d", cardDAV: "card", calendarServer: "cs"]
}

/// Writes an XML answer: elements of the known namespaces with their prefixes (declared once on the root),
/// an element of any other namespace with a declaration of its own, text and attributes escaped.
struct XMLWriter {
    private(set) var text = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    private var open: [String] = []

    /// A writer for part of a document, to `append` to another.
    static func fragment() -> XMLWriter {
        var writer = XMLWriter()
        writer.text = ""
        return writer
    }

    mutating func append(_ fragment: XMLWriter) { text += fragment.text }

    /// The text written since the last take, to send while the document goes on (its open elements
    /// stay open).
    mutating func take() -> String {
        defer { text = "" }
        return text
    }

    /// The root element, declaring the known namespaces.
    mutating func root(_ namespace: String, _ name: String) {
        let declarations = Namespace.prefixes.sorted { $0.value < $1.value }.map {
            " xmlns:\($0.value)=\"\(Self.escaped($0.key))\""
        }.joined()
        start(namespace, name, extra: declarations)
    }

    mutating func start(_ namespace: String, _ name: String, attributes: [(String, String)] = [], extra: String = "") {
        let tag = Self.tag(namespace, name)
        text += "<" + tag.name + tag.declaration + extra
        for (key, value) in attributes { text += " \(key)=\"\(Self.escaped(value))\"" }
        text += ">"
        open.append(tag.name)
    }

    mutating func end() {
        text += "</" + open.removeLast() + ">"
    }

    /// An element with text (or empty when `content` is nil).
    mutating func element(
        _ namespace: String, _ name: String, _ content: String? = nil, attributes: [(String, String)] = []
    ) {
        let tag = Self.tag(namespace, name)
        text += "<" + tag.name + tag.declaration
        for (key, value) in attributes { text += " \(key)=\"\(Self.escaped(value))\"" }
        if let content {
            text += ">" + Self.escaped(content) + "</" + tag.name + ">"
        } else {
            text += "/>"
        }
    }

    mutating func href(_ path: String) { element(Namespace.dav, "href", path) }

    mutating func status(_ code: Int, _ reason: String) {
        element(Namespace.dav, "status", "HTTP/1.1 \(code) \(reason)")
    }

    private static func tag(_ namespace: String, _ name: String) -> (name: String, declaration: String) {
        if let prefix = Namespace.prefixes[namespace] { return (prefix + ":" + name, "") }
        return ("x:" + name, " xmlns:x=\"\(escaped(namespace))\"")
    }

    /// `text` with `&`, `<`, `>` and `"` as entities and a carriage return as `&#13;` (a vCard's lines end
    /// in CRLF, which an XML reader would otherwise make LF). XML 1.0 cannot carry other control characters at
    /// all; a contact never holds them (validation), and any that came would be U+FFFD. Read and written as
    /// UTF-8 bytes: a multiget's answer escapes every card.
    static func escaped(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes -> String? in
            guard bytes.contains(where: needsEscaping) else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + bytes.count / 16)
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "&"): out += "&amp;".utf8
                case UInt8(ascii: "<"): out += "&lt;".utf8
                case UInt8(ascii: ">"): out += "&gt;".utf8
                case UInt8(ascii: "\""): out += "&quot;".utf8
                case UInt8(ascii: "\r"): out += "&#13;".utf8
                case UInt8(ascii: "\n"), UInt8(ascii: "\t"): out.append(byte)
                case ..<0x20: out += "\u{FFFD}".utf8
                default: out.append(byte)
                }
            }
            return String(decoding: out, as: UTF8.self)
        } ?? text
    }

    private static func needsEscaping(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""): true
        case UInt8(ascii: "\n"), UInt8(ascii: "\t"): false
        case ..<0x20: true
        default: false
        }
    }
}
