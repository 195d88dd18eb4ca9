import HTTPTypes
import Hummingbird
import SyncCore

/// The router as WebSocket upgrade requests see it.
///
/// An upgrade the router accepts goes ahead. One it refuses gets the router's own answer (`401`
/// with the error body for a missing token, `429` with `Retry-After`, `404` for a path that is not
/// a route) instead of hummingbird-websocket's bare `400` (see ``RefusedUpgradeWriter``).
struct WebSocketUpgradeRouter: HTTPResponderBuilder {
    /// Set by WebSocket routes on their `200`, to tell an accepted upgrade from a plain route's
    /// `200`; removed before the `101` goes out.
    static let acceptedHeader = HTTPField.Name("X-Sync-WebSocket-Accepted")!

    let router: Router<SyncRequestContext>

    func buildResponder() -> Responder {
        Responder(router: router.buildResponder())
    }

    struct Responder: HTTPResponder {
        typealias Context = SyncRequestContext

        let router: RouterResponder<SyncRequestContext>

        func respond(to request: Request, context: SyncRequestContext) async throws -> Response {
            var response: Response
            do {
                response = try await router.respond(to: request, context: context)
            } catch {
                response = ErrorMiddleware<SyncRequestContext>.response(
                    for: SyncError(
                        .internalError,
                        "the server failed to handle this request; try again, and report it if it keeps happening"))
            }
            if response.status == .ok && response.headers[WebSocketUpgradeRouter.acceptedHeader] != nil {
                response.headers[WebSocketUpgradeRouter.acceptedHeader] = nil
                return response
            }
            if response.status == .ok {
                response = ErrorMiddleware<SyncRequestContext>.response(
                    for: SyncError(
                        .invalidArguments,
                        "\(request.uri.path) does not take a WebSocket; only GET /v1/push does. Send the request without the Upgrade header"
                    ))
            }
            try await RefusedUpgradeWriter.install(response, on: context.channel)
            // Not 200, so the upgrade is refused and the writer answers with `response`.
            return response
        }
    }
}
