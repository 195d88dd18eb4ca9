import Foundation

/// Reads the subset of YAML that `openapi.yaml` is written in, for tests that walk the document:
/// block mappings and sequences by indentation, flow sequences (`[a, b]`) and flow mappings
/// (`{a: b}`), block scalars (`|`), single- and double-quoted and plain scalars.
///
/// Mappings become `[String: Any]`, sequences `[Any]`, and every scalar a `String`. Anything
/// outside the subset throws, so a document edit the reader cannot follow fails loudly.
enum MiniYAML {
    struct Problem: Error, CustomStringConvertible {
        var line: Int
        var message: String
        var description: String { "openapi.yaml line \(line): \(message)" }
    }

    static func parse(_ text: String) throws -> Any {
        var reader = Reader(
            lines: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        return try reader.block(indent: 0)
    }

    private struct Reader {
        let lines: [String]
        var position = 0

        init(lines: [String]) {
            self.lines = lines
        }

        /// The next line that holds something, and its indentation.
        mutating func peek() -> (indent: Int, text: String)? {
            while position < lines.count {
                let line = lines[position]
                let trimmed = line.drop { $0 == " " }
                if trimmed.isEmpty || trimmed.hasPrefix("#") {
                    position += 1
                    continue
                }
                return (line.count - trimmed.count, String(trimmed))
            }
            return nil
        }

        /// The mapping or sequence whose lines are indented by `indent`.
        mutating func block(indent: Int) throws -> Any {
            guard let (firstIndent, text) = peek(), firstIndent == indent else { return [String: Any]() }
            return text.hasPrefix("- ") || text == "-" ? try sequence(indent: indent) : try mapping(indent: indent)
        }

        mutating func mapping(indent: Int) throws -> [String: Any] {
            var result: [String: Any] = [:]
            while let (lineIndent, text) = peek(), lineIndent == indent, !text.hasPrefix("- ") {
                try entry(text, indent: indent, into: &result)
            }
            if let (lineIndent, _) = peek(), lineIndent > indent {
                throw Problem(line: position + 1, message: "unexpected indentation")
            }
            return result
        }

        /// One `key: value` line (and the lines that belong to its value).
        mutating func entry(_ text: String, indent: Int, into result: inout [String: Any]) throws {
            let line = position + 1
            guard let (key, rest) = Self.splitKey(text) else {
                throw Problem(line: line, message: "expected 'key: value', found \(text)")
            }
            position += 1
            if rest.isEmpty {
                // The value is the indented block below (or a sequence at the same indentation).
                if let (nextIndent, nextText) = peek(),
                    nextIndent > indent || (nextIndent == indent && nextText.hasPrefix("- "))
                {
                    result[key] = try block(indent: nextIndent)
                } else {
                    result[key] = ""
                }
            } else if rest == "|" || rest == ">" {
                result[key] = blockScalar(indent: indent)
            } else {
                result[key] = try Self.scalarOrFlow(rest, line: line)
            }
        }

        mutating func sequence(indent: Int) throws -> [Any] {
            var result: [Any] = []
            while let (lineIndent, text) = peek(), lineIndent == indent, text.hasPrefix("- ") {
                let line = position + 1
                let item = String(text.dropFirst(2))
                if Self.splitKey(item) != nil, !item.hasPrefix("{"), !item.hasPrefix("[") {
                    // "- key: value" starts a mapping whose other keys are indented past the dash.
                    var mapping: [String: Any] = [:]
                    try entry(item, indent: indent + 2, into: &mapping)
                    while let (nextIndent, nextText) = peek(), nextIndent == indent + 2 {
                        try entry(nextText, indent: indent + 2, into: &mapping)
                    }
                    result.append(mapping)
                } else {
                    position += 1
                    result.append(try Self.scalarOrFlow(item, line: line))
                }
            }
            return result
        }

        /// The lines of a `|` scalar: everything indented past the key.
        mutating func blockScalar(indent: Int) -> String {
            var text: [String] = []
            while position < lines.count {
                let line = lines[position]
                let trimmed = line.drop { $0 == " " }
                if !trimmed.isEmpty && line.count - trimmed.count <= indent { break }
                text.append(String(trimmed))
                position += 1
            }
            return text.joined(separator: "\n")
        }

        /// Splits `key: rest` at the first `: ` (or a trailing `:`) outside quotes.
        static func splitKey(_ text: String) -> (String, String)? {
            var quote: Character?
            var index = text.startIndex
            while index < text.endIndex {
                let character = text[index]
                if let open = quote {
                    if character == open { quote = nil }
                } else if character == "'" || character == "\"" {
                    quote = character
                } else if character == ":" {
                    let next = text.index(after: index)
                    if next == text.endIndex || text[next] == " " {
                        let key = unquote(String(text[..<index]).trimmingCharacters(in: .whitespaces))
                        return (key, String(text[next...]).trimmingCharacters(in: .whitespaces))
                    }
                }
                index = text.index(after: index)
            }
            return nil
        }

        static func scalarOrFlow(_ text: String, line: Int) throws -> Any {
            if text.hasPrefix("[") || text.hasPrefix("{") {
                var flow = Flow(text: Array(text), line: line)
                let value = try flow.value()
                guard flow.atEnd else { throw Problem(line: line, message: "trailing text after \(text)") }
                return value
            }
            return unquote(text)
        }

        static func unquote(_ text: String) -> String {
            if text.count >= 2, let first = text.first, first == text.last, first == "'" || first == "\"" {
                let inner = String(text.dropFirst().dropLast())
                return first == "'" ? inner.replacingOccurrences(of: "''", with: "'") : inner
            }
            return text
        }
    }

    /// A flow collection on one line: `[a, b]`, `{a: b, c: [d]}`.
    private struct Flow {
        let text: [Character]
        let line: Int
        var index = 0

        var atEnd: Bool {
            text[index...].allSatisfy { $0 == " " }
        }

        mutating func skipSpaces() {
            while index < text.count, text[index] == " " { index += 1 }
        }

        mutating func value() throws -> Any {
            skipSpaces()
            guard index < text.count else { throw Problem(line: line, message: "unfinished flow collection") }
            if text[index] == "[" {
                index += 1
                var items: [Any] = []
                skipSpaces()
                if index < text.count, text[index] == "]" {
                    index += 1
                    return items
                }
                while true {
                    items.append(try value())
                    skipSpaces()
                    guard index < text.count else { throw Problem(line: line, message: "unfinished sequence") }
                    if text[index] == "]" {
                        index += 1
                        return items
                    }
                    guard text[index] == "," else { throw Problem(line: line, message: "expected ',' or ']'") }
                    index += 1
                }
            }
            if text[index] == "{" {
                index += 1
                var members: [String: Any] = [:]
                skipSpaces()
                if index < text.count, text[index] == "}" {
                    index += 1
                    return members
                }
                while true {
                    let key = scalar(until: [":"])
                    guard index < text.count, text[index] == ":" else {
                        throw Problem(line: line, message: "expected ':'")
                    }
                    index += 1
                    members[key] = try value()
                    skipSpaces()
                    guard index < text.count else { throw Problem(line: line, message: "unfinished mapping") }
                    if text[index] == "}" {
                        index += 1
                        return members
                    }
                    guard text[index] == "," else { throw Problem(line: line, message: "expected ',' or '}'") }
                    index += 1
                }
            }
            return scalar(until: [",", "]", "}"])
        }

        mutating func scalar(until stops: Set<Character>) -> String {
            skipSpaces()
            if index < text.count, text[index] == "'" || text[index] == "\"" {
                let quote = text[index]
                index += 1
                let start = index
                while index < text.count, text[index] != quote { index += 1 }
                let result = String(text[start..<min(index, text.count)])
                index = min(index + 1, text.count)
                return result
            }
            let start = index
            while index < text.count, !stops.contains(text[index]) { index += 1 }
            return String(text[start..<index]).trimmingCharacters(in: .whitespaces)
        }
    }
}
