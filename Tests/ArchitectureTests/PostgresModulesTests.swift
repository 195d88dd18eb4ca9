import Foundation
import Testing

/// The README's run on a PostgreSQL cluster with a standby (`Scripts/with-postgres-ha swift test --filter …`)
/// names the test modules that have PostgreSQL tests, so that the suites a cluster changes nothing for do not
/// run twice. A module that gains a PostgreSQL test must join that list, or its test never meets the cluster.
@Suite("Architecture: the README's run on a cluster names every test module with a PostgreSQL test")
struct PostgresModulesTests {
    @Test("every test module with a suite on every backend or a PostgreSQL-only test is in the filter, and only those")
    func filterNamesEveryPostgresModule() throws {
        let root = ModuleGraph.packageRoot
        let readme = try String(contentsOf: root.appending(path: "README.md"), encoding: .utf8)
        let filtered = try Self.filteredModules(inReadme: readme)
        let testModules = Self.testTargets(
            inManifest: try String(contentsOf: root.appending(path: "Package.swift"), encoding: .utf8))
        let withPostgres = try testModules.filter { module in
            try Self.usesPostgres(folder: root.appending(path: "Tests/\(module)"))
        }
        #expect(!withPostgres.isEmpty, "no test module has a PostgreSQL test: the scan found nothing")
        let missing = withPostgres.subtracting(filtered).sorted()
        let stale = filtered.subtracting(withPostgres).sorted()
        #expect(
            missing.isEmpty && stale.isEmpty,
            """
            README.md's `Scripts/with-postgres-ha swift test --filter` line differs from the test modules with \
            PostgreSQL tests: missing \(missing), without PostgreSQL tests \(stale). The modules with them: \
            \(withPostgres.sorted().joined(separator: "|"))
            """)
    }

    @Test("the filter is read from the README's line, and a PostgreSQL test by the trait, types and variables it uses")
    func readsTheLineAndTheUses() throws {
        let readme = """
            ```
            Scripts/with-postgres swift test
            SYNC_TEST_CLUSTERS=b Scripts/with-postgres-ha swift test --filter 'ATests|BTests'
            ```
            """
        #expect(try Self.filteredModules(inReadme: readme) == ["ATests", "BTests"])
        #expect(throws: DocumentError.self) { try Self.filteredModules(inReadme: "no such line") }
        #expect(Self.usesPostgres(source: "@Suite(\"x\", .onEveryBackend) struct S {}"))
        #expect(Self.usesPostgres(source: "guard let url = TestPostgres.url else { return }"))
        #expect(Self.usesPostgres(source: "let cluster = try await FailoverCluster.start()"))
        #expect(!Self.usesPostgres(source: "@Suite(\"x\") struct S { let backend = \"sqlite\" }"))
        let manifest = """
            .testTarget(
                name: "ATests",
                dependencies: ["A"]
            ),
            .target(name: "A"),
            .testTarget(name: "BTests")
            """
        #expect(Self.testTargets(inManifest: manifest) == ["ATests", "BTests"])
    }

    static let commandPrefix = "SYNC_TEST_CLUSTERS=b Scripts/with-postgres-ha swift test --filter '"

    /// The module names of the README's cluster line's filter, `'A|B|C'`.
    static func filteredModules(inReadme readme: String) throws -> Set<String> {
        guard let line = readme.split(separator: "\n").first(where: { $0.hasPrefix(commandPrefix) }),
            let pattern = line.dropFirst(commandPrefix.count).split(separator: "'").first
        else {
            throw DocumentError(description: "README.md has no line starting \(commandPrefix)")
        }
        return Set(pattern.split(separator: "|").map(String.init))
    }

    /// The names of the manifest's test targets.
    static func testTargets(inManifest manifest: String) -> Set<String> {
        var names = Set<String>()
        var rest = manifest[...]
        while let target = rest.range(of: ".testTarget(") {
            rest = rest[target.upperBound...]
            guard let name = rest.range(of: "name: \""),
                let close = rest[name.upperBound...].firstIndex(of: "\"")
            else { break }
            names.insert(String(rest[name.upperBound..<close]))
        }
        return names
    }

    static func usesPostgres(folder: URL) throws -> Bool {
        // This file names what it looks for, and runs none of it.
        let thisFile = URL(fileURLWithPath: #filePath).standardizedFileURL
        for file in ModuleGraph.swiftFiles(in: folder) where file.standardizedFileURL != thisFile {
            if usesPostgres(source: try String(contentsOf: file, encoding: .utf8)) { return true }
        }
        return false
    }

    /// A suite on every backend (`.onEveryBackend`), or a test that needs PostgreSQL: the tests' server
    /// (`TestPostgres`), a cluster of its own (`FailoverCluster`) or the variables the scripts set.
    static func usesPostgres(source: String) -> Bool {
        [".onEveryBackend", "TestPostgres", "FailoverCluster", "SYNC_TEST_POSTGRES"].contains { source.contains($0) }
    }
}
