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
