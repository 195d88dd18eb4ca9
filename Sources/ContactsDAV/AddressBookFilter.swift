import Foundation
import HTTPTypes
import VCard

/// An `addressbook-query`'s filter (RFC 6352 §10.5): property filters with text matches and parameter
/// filters, combined with `anyof` or `allof`, evaluated on each contact's vCard.
struct AddressBookFilter: Sendable {
    enum Test: Sendable { case anyOf, allOf }

    enum MatchType: String, Sendable {
        case equals, contains
        case startsWith = "starts-with"
        case endsWith = "ends-with"
    }

    enum Collation: String, Sendable {
        case unicodeCaseMap = "i;unicode-casemap"
        case asciiCaseMap = "i;ascii-casemap"
        case octet = "i;octet"
    }

    struct TextMatch: Sendable {
        var text: String
        var collation: Collation
        var matchType: MatchType
        var negate: Bool

        func matches(_ value: String) -> Bool {
            let found: Bool
            switch collation {
            case .octet: found = Self.match(value, text, matchType)
            case .asciiCaseMap: found = Self.match(Self.asciiLower(value), Self.asciiLower(text), matchType)
            case .unicodeCaseMap: found = Self.match(value.lowercased(), text.lowercased(), matchType)
            }
            return found != negate
        }

        private static func match(_ value: String, _ text: String, _ type: MatchType) -> Bool {
            switch type {
            case .equals: value == text
            case .contains: text.isEmpty || value.contains(text)
            case .startsWith: value.hasPrefix(text)
            case .endsWith: value.hasSuffix(text)
            }
        }

        private static func asciiLower(_ text: String) -> String {
            String(
                String.UnicodeScalarView(
                    text.unicodeScalars.map { $0.isASCII ? Unicode.Scalar(UInt8(ascii: $0).lowercasedASCII) : $0 }))
        }
    }

    struct ParameterFilter: Sendable {
        var name: String
        var isNotDefined: Bool
        var textMatch: TextMatch?

        func matches(_ property: Property) -> Bool {
            let values = property.parameters.filter { $0.name.uppercased() == name }.flatMap(\.values)
            let defined = property.parameters.contains { $0.name.uppercased() == name }
            if isNotDefined { return !defined }
            guard defined else { return false }
            guard let textMatch else { return true }
            return values.contains(where: textMatch.matches)
        }
    }

    struct PropertyFilter: Sendable {
        var name: String
        var test: Test
        var isNotDefined: Bool
        var textMatches: [TextMatch]
        var parameterFilters: [ParameterFilter]

        func matches(_ card: VCard) -> Bool {
            let properties = card.properties.filter { $0.name == name }
            if isNotDefined { return properties.isEmpty }
            guard !properties.isEmpty else { return false }
            if textMatches.isEmpty && parameterFilters.isEmpty { return true }
            return properties.contains { property in
                let results =
                    textMatches.lazy.map { $0.matches(property.text) }
                    + parameterFilters.lazy.map { $0.matches(property) }
                return test == .anyOf ? results.contains(true) : !results.contains(false)
            }
        }
    }

    var test: Test
    var propertyFilters: [PropertyFilter]

    /// Reads a `CARDDAV:filter` element; throws 403 with the precondition RFC 6352 names for what the bridge
    /// does not support (another collation, an unknown element), 400 for what is not a filter at all.
    init(_ node: XMLNode?) throws(DAVError) {
        guard let node else {
            test = .anyOf
            propertyFilters = []
            return
        }
        test = try Self.test(node)
        var filters: [PropertyFilter] = []
        for child in node.children {
            guard child.is(Namespace.cardDAV, "prop-filter"), let name = child.attributes["name"], !name.isEmpty else {
                throw DAVError(
                    .forbidden, "a filter holds prop-filter elements with a name, not \(child.name)",
                    condition: (Namespace.cardDAV, "supported-filter", nil))
            }
            var textMatches: [TextMatch] = []
            var parameterFilters: [ParameterFilter] = []
            for part in child.children {
                if part.is(Namespace.cardDAV, "text-match") {
                    textMatches.append(try Self.textMatch(part))
                } else if part.is(Namespace.cardDAV, "param-filter"), let parameter = part.attributes["name"] {
                    parameterFilters.append(
                        ParameterFilter(
                            name: parameter.uppercased(),
                            isNotDefined: part.child(Namespace.cardDAV, "is-not-defined") != nil,
                            textMatch: try part.child(Namespace.cardDAV, "text-match").map(Self.textMatch)))
                } else if !part.is(Namespace.cardDAV, "is-not-defined") {
                    throw DAVError(
                        .forbidden, "a prop-filter holds is-not-defined, text-match or param-filter, not \(part.name)",
                        condition: (Namespace.cardDAV, "supported-filter", nil))
                }
            }
            filters.append(
                PropertyFilter(
                    name: name.uppercased(), test: try Self.test(child),
                    isNotDefined: child.child(Namespace.cardDAV, "is-not-defined") != nil, textMatches: textMatches,
                    parameterFilters: parameterFilters))
        }
        propertyFilters = filters
    }

    /// Whether `card` passes (an empty filter passes every card).
    func matches(_ card: VCard) -> Bool {
        guard !propertyFilters.isEmpty else { return true }
        return test == .anyOf
            ? propertyFilters.contains { $0.matches(card) } : propertyFilters.allSatisfy { $0.matches(card) }
    }

    private static func test(_ node: XMLNode) throws(DAVError) -> Test {
        switch node.attributes["test"] ?? "anyof" {
        case "anyof": return .anyOf
        case "allof": return .allOf
        case let other: throw DAVError(.badRequest, "a filter's test is anyof or allof, not '\(other)'")
        }
    }

    private static func textMatch(_ node: XMLNode) throws(DAVError) -> TextMatch {
        guard let collation = Collation(rawValue: node.attributes["collation"] ?? Collation.unicodeCaseMap.rawValue)
        else {
            throw DAVError(
                .forbidden,
                "the collation '\(node.attributes["collation"] ?? "")' is not supported; use i;unicode-casemap, i;ascii-casemap or i;octet",
                condition: (Namespace.cardDAV, "supported-collation", nil))
        }
        guard let matchType = MatchType(rawValue: node.attributes["match-type"] ?? MatchType.contains.rawValue) else {
            throw DAVError(
                .badRequest, "a text-match's match-type is equals, contains, starts-with or ends-with")
        }
        return TextMatch(
            text: node.text, collation: collation, matchType: matchType,
            negate: node.attributes["negate-condition"] == "yes")
    }
}

extension UInt8 {
    fileprivate var lowercasedASCII: UInt8 { (65...90).contains(self) ? self + 32 : self }
}
