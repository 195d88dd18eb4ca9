import Foundation
import HTTPTypes

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An element of a request's XML body: its namespace and local name, attributes, children and text.
/// Read with Foundation's `XMLParser` (libxml2), namespaces resolved, no entity or DTD ever loaded.
struct XMLNode: Sendable, Hashable {
    var namespace: String
    var name: String
    var attributes: [String: String] = [:]
    var children: [XMLNode] = []
    var text = ""

    func `is`(_ namespace: String, _ name: String) -> Bool { self.namespace == namespace && self.name == name }

    /// The first child named so.
    func child(_ namespace: String, _ name: String) -> XMLNode? { children.first { $0.is(namespace, name) } }

    func all(_ namespace: String, _ name: String) -> [XMLNode] { children.filter { $0.is(namespace, name) } }

    /// Parses `data` as one XML document; throws ``DAVError`` 400 for anything that is not well-formed XML
    /// (a DTD with entities included: a request has no need of one, and expanding them is an attack).
    static func parse(_ data: Data) throws(DAVError) -> XMLNode {
        try requireUTF8(data)
        // libxml2 neither expands nested entities without bound nor loads external ones as configured here,
        // yet the parser does not report every declaration to its delegate: a document type is refused
        // before parsing, whatever it declares.
        if data.range(of: Data("<!DOCTYPE".utf8)) != nil || data.range(of: Data("<!doctype".utf8)) != nil {
            throw DAVError(
                .badRequest, "the request's XML has a document type declaration; a DAV request has no need of one")
        }
        let builder = TreeBuilder()
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = builder
        let parsed = parser.parse()
        // XMLParser can return true for a document libxml2 found malformed: its error is the answer.
        if let problem = builder.problem {
            throw DAVError(.badRequest, problem)
        }
        guard parsed, parser.parserError == nil, let root = builder.root else {
            let reason = parser.parserError.map {
                " (\(($0 as NSError).localizedDescription), line \(parser.lineNumber))"
            }
            throw DAVError(.badRequest, "the request's body is not well-formed XML\(reason ?? "")")
        }
        return root
    }
}

extension XMLNode {
    /// Refuses (415) a body that is not UTF-8, before anything reads it as XML. The checks made on the
    /// bytes (a document type is refused) see a declaration only in UTF-8; libxml2 reads UTF-16 and UTF-32
    /// from their first bytes, with or without a byte order mark, and any encoding a declaration names
    /// (UTF-7 spells `<!DOCTYPE` as `+ADw-!DOCTYPE`), and would expand the entities of a document type the
    /// checks never saw. Every DAV client sends UTF-8; a byte order mark before it is allowed.
    static func requireUTF8(_ data: Data) throws(DAVError) {
        func refuse(_ why: String) -> DAVError {
            DAVError(.unsupportedMediaType, "the request's XML is \(why); send it in UTF-8")
        }
        guard String(data: data, encoding: .utf8) != nil else { throw refuse("not UTF-8") }
        // NUL is valid UTF-8 but in no XML text: it is how UTF-16 and UTF-32 without a byte order mark look.
        guard !data.contains(0) else { throw refuse("not UTF-8 (it has NUL bytes: UTF-16 or UTF-32?)") }
        var text = data.prefix(200)
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        guard text.starts(with: Data("<?xml".utf8)), let end = text.range(of: Data("?>".utf8)) else { return }
        let declaration = String(decoding: text[text.startIndex..<end.lowerBound], as: UTF8.self)
        guard let range = declaration.range(of: #"encoding\s*=\s*["']([^"']*)["']"#, options: .regularExpression)
        else { return }
        let encoding =
            declaration[range].split(whereSeparator: { $0 == "\"" || $0 == "'" }).dropFirst().first
            .map { $0.lowercased() } ?? ""
        guard ["utf-8", "utf8", "us-ascii", "ascii"].contains(encoding) else {
            throw refuse("declared as \(encoding.isEmpty ? "an empty encoding" : "'\(encoding)'")")
        }
    }
}

/// Builds the tree as the parser reports it; refuses a DTD and documents nested deeper than any DAV
/// request is.
private final class TreeBuilder: NSObject, XMLParserDelegate {
    static let maximumDepth = 64

    var stack: [XMLNode] = []
    var root: XMLNode?
    var problem: String?

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        guard stack.count < Self.maximumDepth else {
            fail(parser, "the request's XML is nested deeper than \(Self.maximumDepth) elements")
            return
        }
        stack.append(XMLNode(namespace: namespaceURI ?? "", name: elementName, attributes: attributes))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard let node = stack.popLast() else { return }
        if stack.isEmpty {
            root = node
        } else {
            stack[stack.count - 1].children.append(node)
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard !stack.isEmpty else { return }
        stack[stack.count - 1].text += string
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        guard !stack.isEmpty else { return }
        stack[stack.count - 1].text += String(decoding: block, as: UTF8.self)
    }

    func parser(
        _ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?
    ) {
        fail(parser, "the request's XML declares entities; a DAV request has no need of them")
    }

    func parser(
        _ parser: XMLParser, foundExternalEntityDeclarationWithName name: String, publicID: String?,
        systemID: String?
    ) {
        fail(parser, "the request's XML declares entities; a DAV request has no need of them")
    }

    func parser(_ parser: XMLParser, foundElementDeclarationWithName elementName: String, model: String) {
        fail(parser, "the request's XML has a document type definition; a DAV request has no need of one")
    }

    private func fail(_ parser: XMLParser, _ message: String) {
        if problem == nil { problem = message }
        parser.abortParsing()
    }
}
