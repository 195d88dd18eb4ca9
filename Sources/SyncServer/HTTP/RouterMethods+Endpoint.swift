import HTTPTypes
import Hummingbird
import SyncCore

extension RouterMethods {
    /// Adds the route of `endpoint` (``SyncCore/Endpoint``, the one list the clients use too).
    @discardableResult
    func on(
        _ endpoint: Endpoint, use handler: @Sendable @escaping (Request, Context) async throws -> some ResponseGenerator
    )
        -> Self
    {
        on(RouterPath(endpoint.pattern), method: HTTPRequest.Method(rawValue: endpoint.method.rawValue)!, use: handler)
    }
}
