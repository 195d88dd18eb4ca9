import Foundation

/// A contact as a text file to edit in `$EDITOR`: one `Field: value` line per value, emails and phones one
/// line each (`Email: work: ada@example.org`), notes and the street going on over lines indented by two
/// spaces. Lines starting with `#` are comments; problems found in a saved file are put at its top as
/// comments starting `# ✖`, and taken away again when it is read.
public enum ContactTemplate {
    /// A problem in an edited file: what is wrong, and on which line when one line is at fault.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        public var line: Int?
        public var message: String

        public init(line: Int?, message: String) {
            self.line = line
            self.message = message
        }

        public var description: String { line.map { "line \($0): \(message)" } ?? message }
    }

    typealias Key = ContactPart

    static let problemPrefix = "# ✖ "

    static let header = """
        # Edit the contact, then save and quit. Lines starting with # are left out.
        # One email or phone per line, as "label: value" or the value alone; add lines for more.
        # Dates: 1985-04-12, or 04-12 without the year. Groups: separated by commas.
        # Notes and the street go on over lines indented by two spaces.
        # Quitting without saving, or saving an empty file, changes nothing.

        """

    /// The file for `contact`.
    public static func text(for contact: Contact) -> String {
        var lines: [String] = []
        func put(_ key: Key, _ value: String) {
            let parts = value.split(separator: "\n", omittingEmptySubsequences: false)
            lines.append("\(key.rawValue): \(parts.first ?? "")")
            lines += parts.dropFirst().map { "  " + $0 }
        }
        for key in Key.allCases {
            guard key.isList else {
                put(key, key.text(of: contact))
                continue
            }
            let items = key.items(of: contact)
            for item in items { put(key, item.labeledText) }
            if items.isEmpty { put(key, "") }
        }
        return header + lines.joined(separator: "\n") + "\n"
    }

    /// `text` with `problems` at its top, in place of any problems it had there.
    public static func text(_ text: String, with problems: [Problem]) -> String {
        let kept = text.split(separator: "\n", omittingEmptySubsequences: false).drop {
            $0.hasPrefix(problemPrefix) || $0 == "#"
        }
        let top = problems.map { problemPrefix + $0.description } + ["# Correct the above, then save and quit.", "#"]
        return (top + kept.map(String.init)).joined(separator: "\n")
    }

    /// Whether `text` holds nothing but comments and white space: an emptied file.
    public static func isEmpty(_ text: String) -> Bool {
        text.split(whereSeparator: \.isNewline).allSatisfy {
            $0.hasPrefix("#") || $0.allSatisfy(\.isWhitespace)
        }
    }

    /// The contact `text` describes: `original` with the file's values. Emails and phones keep the IDs of the
    /// items they were (the same value, or the item at the same place when its value was edited), so that a
    /// merge with another device's edits goes item by item. Throws every problem found, and the first that
    /// ``ContactValidation`` finds.
    public static func contact(from text: String, original: Contact) throws(ProblemList) -> Contact {
        var problems: [Problem] = []
        var values: [Key: [(line: Int, text: String)]] = [:]
        var current: (key: Key, index: Int)?
        var blankLines = 0
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = offset + 1
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            if line.hasPrefix("#") { continue }
            if line.allSatisfy(\.isWhitespace) && !(line.hasPrefix("  ") || line.hasPrefix("\t")) {
                blankLines += 1
                continue
            }
            if line.hasPrefix(" ") || line.hasPrefix("\t") {
                guard let (key, index) = current, key.isMultiline else {
                    problems.append(
                        Problem(line: number, message: "an indented line goes on only after Notes or Street"))
                    continue
                }
                let continued =
                    line.hasPrefix("\t") ? line.dropFirst() : line.dropFirst(min(2, line.prefix { $0 == " " }.count))
                values[key]![index].text += String(repeating: "\n", count: blankLines + 1) + continued
                blankLines = 0
                continue
            }
            blankLines = 0
            current = nil
            guard let colon = line.firstIndex(of: ":") else {
                problems.append(Problem(line: number, message: "write each field as 'Name: value'"))
                continue
            }
            guard let key = Key(written: String(line[..<colon])) else {
                let fields = Key.allCases.map(\.rawValue).joined(separator: ", ")
                problems.append(
                    Problem(
                        line: number,
                        message:
                            "'\(line[..<colon].trimmingCharacters(in: .whitespaces))' is not a field; the fields are \(fields)"
                    ))
                continue
            }
            if !key.isList, let first = values[key]?.first {
                problems.append(
                    Problem(
                        line: number, message: "\(key.rawValue) is given twice (first on line \(first.line)); keep one")
                )
                continue
            }
            values[key, default: []].append(
                (number, line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            current = (key, values[key]!.count - 1)
        }
        var contact = original
        for key in Key.allCases where !key.isList {
            do {
                try key.set(Contact.trimmed(values[key]?.first?.text ?? ""), on: &contact)
            } catch {
                problems.append(Problem(line: values[key]?.first?.line, message: error.description))
            }
        }
        contact.emails = items(values[.email] ?? [], originals: original.emails)
        contact.phones = items(values[.phone] ?? [], originals: original.phones)
        if problems.isEmpty {
            do {
                try ContactValidation.validate(contact)
            } catch {
                problems.append(Problem(line: line(of: error, in: values), message: error.description))
            }
        }
        guard problems.isEmpty else { throw ProblemList(problems: problems) }
        return contact
    }

    /// Problems found in a file, each with its line.
    public struct ProblemList: Error, Sendable, Hashable, CustomStringConvertible {
        public var problems: [Problem]

        public var description: String { problems.map(\.description).joined(separator: "\n") }
    }

    private static func items(_ lines: [(line: Int, text: String)], originals: [LabeledValue]) -> [LabeledValue] {
        var unused = originals
        let written = lines.map { LabeledValue.parse($0.text) }.filter { !$0.value.isEmpty || !$0.label.isEmpty }
        var result: [LabeledValue?] = written.map { label, value in
            guard let index = unused.firstIndex(where: { $0.value == value }) else { return nil }
            var item = unused.remove(at: index)
            item.label = label
            return item
        }
        // Values that are new take the IDs of the originals at their places that were changed.
        for position in result.indices where result[position] == nil {
            let (label, value) = written[position]
            if position < originals.count, let index = unused.firstIndex(where: { $0.id == originals[position].id }) {
                var item = unused.remove(at: index)
                (item.label, item.value) = (label, value)
                result[position] = item
            } else {
                result[position] = LabeledValue(label: label, value: value)
            }
        }
        return result.compactMap { $0 }
    }

    /// The line a validation error is about, when the file has it.
    private static func line(of error: ContactError, in values: [Key: [(line: Int, text: String)]]) -> Int? {
        guard let (key, value) = error.subject else { return nil }
        let lines = values[key] ?? []
        return (lines.first { value == nil || LabeledValue.parse($0.text).value == value } ?? lines.first)?.line
    }
}

extension ContactPart {
    /// Whether the value may go on over indented lines in the editor's file.
    fileprivate var isMultiline: Bool { self == .notes || self == .street }

    /// The part a person named in the editor's file, letter case and the American spelling aside.
    fileprivate init?(written: String) {
        let folded = written.trimmingCharacters(in: .whitespaces).lowercased()
        if folded == "organization" || folded == "org" {
            self = .organization
            return
        }
        guard let part = Self.allCases.first(where: { $0.rawValue.lowercased() == folded }) else { return nil }
        self = part
    }
}
