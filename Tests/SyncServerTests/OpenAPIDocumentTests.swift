import Foundation
import Hummingbird
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// Keeps `openapi.yaml` true: every route the server registers is documented, and every
/// documented route exists.
@Suite("openapi.yaml")
struct OpenAPIDocumentTests {
    private static var documentURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("openapi.yaml")
    }

    /// "METHOD /path" for each operation under `paths:`, read from the document's indentation
    /// (paths at two spaces, methods at four).
    static func documentedRoutes() throws -> Set<String> {
        let text = try String(contentsOf: documentURL, encoding: .utf8)
        var routes = Set<String>()
        var inPaths = false
        var currentPath: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" {
                inPaths = true
                continue
            }
            guard inPaths else { continue }
            if !line.hasPrefix(" ") && !line.isEmpty { break }
            if line.hasPrefix("  /") && line.hasSuffix(":") {
                currentPath = String(line.dropFirst(2).dropLast())
            } else if let currentPath, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let key = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "post", "put", "delete", "patch"].contains(key) {
                    routes.insert("\(key.uppercased()) \(currentPath)")
                }
            }
        }
        return routes
    }

    static func registeredRoutes() async throws -> Set<String> {
        let path = TemporaryFiles.path("openapi", extension: "sqlite")
        defer { TemporaryFiles.removeSQLite(path) }
        let store = try SQLiteRecordStore(path: path)
        let router = SyncServerApplication.makeRouter(store: store, pushHub: PushHub(), configuration: .init())
        return Set(
            router.routes.map { route in
                let path = route.path.description.split(separator: "/").map { component in
                    component.hasPrefix(":") ? "{\(component.dropFirst())}" : String(component)
                }.joined(separator: "/")
                return "\(route.method) /\(path)"
            })
    }

    @Test("every registered route is documented and every documented route is registered")
    func documentMatchesRouter() async throws {
        let documented = try Self.documentedRoutes()
        let registered = try await Self.registeredRoutes()
        #expect(documented.count >= 13)
        #expect(
            registered.subtracting(documented).isEmpty, "undocumented: \(registered.subtracting(documented).sorted())")
        #expect(
            documented.subtracting(registered).isEmpty,
            "documented but missing: \(documented.subtracting(registered).sorted())")
    }

    @Test("the router serves exactly the endpoints the clients name (SyncCore's Endpoint.all)")
    func routerServesTheEndpointList() async throws {
        let listed = Set(
            Endpoint.all.map { endpoint in
                let path = endpoint.pattern.split(separator: "/", omittingEmptySubsequences: false).map { component in
                    component.hasPrefix(":") ? "{\(component.dropFirst())}" : String(component)
                }.joined(separator: "/")
                return "\(endpoint.method.rawValue) \(path)"
            })
        #expect(Endpoint.all.count == Set(Endpoint.all).count, "an endpoint is listed twice")
        #expect(try await Self.registeredRoutes() == listed)
    }

    @Test("every error code the server uses is listed in the document")
    func errorCodesAreDocumented() throws {
        let text = try String(contentsOf: Self.documentURL, encoding: .utf8)
        let codes: [SyncError.Code] = [
            .invalidArguments, .notAuthenticated, .permissionFailure, .zoneNotFound, .unknownItem,
            .serverRecordChanged, .batchRequestFailed, .constraintViolation, .changeTokenExpired, .limitExceeded,
            .requestRateLimited, .serviceUnavailable, .internalError,
        ]
        for code in codes {
            #expect(text.contains(code.rawValue), "\(code) is not in openapi.yaml")
        }
    }
}
