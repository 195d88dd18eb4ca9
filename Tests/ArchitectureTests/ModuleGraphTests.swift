import Foundation
import Testing

/// The module graph docs/ARCHITECTURE.md draws is the one the code has: every module's imports of the
/// package's other modules, edge for edge.
@Suite("Architecture: the module graph in the docs is the code's")
struct ModuleGraphTests {
    @Test(
        "every import of one of the package's modules is an edge of docs/ARCHITECTURE.md's graph, and every edge an import"
    )
    func graphMatchesImports() throws {
        let code = try ModuleGraph.fromSources(at: ModuleGraph.packageRoot.appending(path: "Sources"))
        let documented = try ModuleGraph.fromMermaid(
            in: String(contentsOf: ModuleGraph.packageRoot.appending(path: "docs/ARCHITECTURE.md"), encoding: .utf8))
        let missing = code.edges.subtracting(documented.edges).sorted()
        let stale = documented.edges.subtracting(code.edges).sorted()
        #expect(
            missing.isEmpty && stale.isEmpty,
            """
            docs/ARCHITECTURE.md's graph differs from the imports: \
            missing \(missing.map(\.description)), not imported \(stale.map(\.description)). \
            The graph as the code has it:
            \(code.mermaid)
            """)
    }

    @Test(
        "the graph reader sees imports of every form, and a module's imports of itself or of other packages are not edges"
    )
    func readsImports() throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "module-graph-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for module in ["App", "Core", "Lower"] {
            try FileManager.default.createDirectory(
                at: directory.appending(path: "\(module)/Nested"), withIntermediateDirectories: true)
        }
        try """
        import Foundation
        @testable import Core
        #if canImport(Glibc)
            import Glibc
        #endif
        """.write(to: directory.appending(path: "App/A.swift"), atomically: true, encoding: .utf8)
        try "@_exported import Lower\nimport struct App.Thing\nimport Core\n"
            .write(to: directory.appending(path: "Core/Nested/B.swift"), atomically: true, encoding: .utf8)
        let graph = try ModuleGraph.fromSources(at: directory)
        #expect(graph.edges == [.init("App", "Core"), .init("Core", "App"), .init("Core", "Lower")])
    }

    @Test("the graph in the docs is read with its labelled executables")
    func readsMermaid() throws {
        let markdown = """
            ```mermaid
            flowchart TD
                syncserver["sync-server (executable)"] --> SyncServer
                syncserver --> BuildInfo
                SyncServer --> SyncCore
            ```
            """
        #expect(
            try ModuleGraph.fromMermaid(in: markdown).edges == [
                .init("sync-server", "SyncServer"), .init("sync-server", "BuildInfo"), .init("SyncServer", "SyncCore"),
            ])
    }
}

/// Which of a package's modules imports which.
struct ModuleGraph {
    struct Edge: Hashable, Comparable, CustomStringConvertible {
        var from: String
        var to: String

        init(_ from: String, _ to: String) {
            self.from = from
            self.to = to
        }

        static func < (a: Edge, b: Edge) -> Bool { (a.from, a.to) < (b.from, b.to) }
        var description: String { "\(from) → \(to)" }
    }

    var modules: Set<String>
    var edges: Set<Edge>

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The modules are `sources`' folders; the edges, their Swift files' imports of one another.
    static func fromSources(at sources: URL) throws -> ModuleGraph {
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: sources.appending(path: name).path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }
        var edges = Set<Edge>()
        for module in modules {
            for file in swiftFiles(in: sources.appending(path: module)) {
                for imported in importedModules(try String(contentsOf: file, encoding: .utf8))
                where imported != module && modules.contains(imported) {
                    edges.insert(Edge(module, imported))
                }
            }
        }
        return ModuleGraph(modules: Set(modules), edges: edges)
    }

    /// The Swift files under `folder`, at any depth; none when it does not exist.
    static func swiftFiles(in folder: URL) -> [URL] {
        guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else {
            return []
        }
        return files.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }

    /// The modules a Swift file imports, in any form (`@testable`, `@_exported`, `import struct M.T`,
    /// inside `#if`).
    static func importedModules(_ source: String) -> [String] {
        let attributes: Set<String> = ["@testable", "@_exported", "public", "package", "internal", "private"]
        let kinds: Set<String> = ["struct", "class", "enum", "protocol", "func", "typealias", "var", "let"]
        return source.split(whereSeparator: \.isNewline).compactMap { line in
            var words = line.split(whereSeparator: \.isWhitespace).map(String.init)
            while let first = words.first, attributes.contains(first) { words.removeFirst() }
            guard words.first == "import", words.count >= 2 else { return nil }
            let name = kinds.contains(words[1]) && words.count >= 3 ? words[2] : words[1]
            return String(name.prefix { $0 != "." })
        }
    }

    /// The edges of the first ```mermaid block: `A --> B`, a node written `id["name (executable)"]` the
    /// first time being `name` wherever `id` appears.
    static func fromMermaid(in markdown: String) throws -> ModuleGraph {
        guard let start = markdown.range(of: "```mermaid\n"),
            let end = markdown.range(of: "```", range: start.upperBound..<markdown.endIndex)
        else {
            throw DocumentError(description: "no ```mermaid block")
        }
        var names: [String: String] = [:]
        func node(_ text: Substring) -> String {
            let text = text.trimmingCharacters(in: .whitespaces)
            guard let bracket = text.firstIndex(of: "[") else { return names[text] ?? text }
            let id = String(text[..<bracket])
            let label = text[bracket...].trimmingCharacters(in: CharacterSet(charactersIn: "[]\""))
            let name = String(label.split(separator: " ").first ?? Substring(id))
            names[id] = name
            return name
        }
        var edges = Set<Edge>()
        var modules = Set<String>()
        for line in markdown[start.upperBound..<end.lowerBound].split(separator: "\n") {
            let sides = line.components(separatedBy: "-->")
            guard sides.count == 2 else { continue }
            let edge = Edge(node(Substring(sides[0])), node(Substring(sides[1])))
            edges.insert(edge)
            modules.formUnion([edge.from, edge.to])
        }
        return ModuleGraph(modules: modules, edges: edges)
    }

    /// The graph as a mermaid block, executables (lowercase names) labelled as such.
    var mermaid: String {
        func id(_ module: String) -> String { module.replacingOccurrences(of: "-", with: "") }
        var labelled = Set<String>()
        func node(_ module: String) -> String {
            guard module.first?.isLowercase == true, labelled.insert(module).inserted else { return id(module) }
            return "\(id(module))[\"\(module) (executable)\"]"
        }
        let lines = edges.sorted().map { "    \(node($0.from)) --> \(node($0.to))" }
        return (["```mermaid", "flowchart TD"] + lines + ["```"]).joined(separator: "\n")
    }
}

/// A document the architecture tests read lacks what they look for in it.
struct DocumentError: Error, CustomStringConvertible {
    var description: String
}
