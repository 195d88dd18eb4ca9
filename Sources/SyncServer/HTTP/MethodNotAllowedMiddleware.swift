import HTTPTypes
import Hummingbird
import SyncCore

/// Answers `405 Method Not Allowed`, with `Allow` naming the methods the path has, when a path
/// exists but not with the request's method. A path no route has stays `404`.
///
/// Add it to the router after every route: Hummingbird applies router middleware only to routes
/// added after it, and to its not-found responder, which it builds last. So this runs only for
/// requests that no route took.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    private let routes: [(path: RouterPath, methods: [HTTPRequest.Method])]

    init(routes: [Router<SyncRequestContext>.RouteDescription]) {
        var byPath: [String: (path: RouterPath, methods: [HTTPRequest.Method])] = [:]
        for route in routes {
            byPath[route.path.description, default: (route.path, [])].methods.append(route.method)
        }
        self.routes = byPath.values.sorted { $0.path.description < $1.path.description }
    }

    func handle(
        _ request: Request, context: SyncRequestContext,
        next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = methods(forPath: request.uri.path)
            guard !allowed.isEmpty else { throw error }
            let list = allowed.map(\.rawValue).sorted().joined(separator: ", ")
            throw StatusError(
                error: SyncError(
                    .invalidArguments,
                    "\(request.method) is not allowed on \(request.uri.path); it takes \(list) (see openapi.yaml)"),
                status: .methodNotAllowed, headers: [.allow: list])
        }
    }

    /// The methods of the routes whose pattern matches `path`; none when no route has the path.
    /// Where patterns of both kinds match, the ones with fewer parameters win, as the router's do:
    /// `/v1/account/sessions/end-others` is the POST route's path, not a session ID.
    func methods(forPath path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var methods: [HTTPRequest.Method] = []
        var fewestParameters = Int.max
        for route in routes where route.path.components.count == segments.count {
            guard zip(route.path.components, segments).allSatisfy({ $0 ~= $1 }) else { continue }
            let parameters = route.path.description.split(separator: "/").filter {
                $0.hasPrefix(":") || $0.hasPrefix("*") || $0.hasPrefix("{")
            }.count
            if parameters < fewestParameters {
                (methods, fewestParameters) = ([], parameters)
            }
            if parameters == fewestParameters {
                methods += route.methods.filter { !methods.contains($0) }
            }
        }
        return methods
    }
}
