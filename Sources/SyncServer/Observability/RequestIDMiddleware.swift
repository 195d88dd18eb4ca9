import HTTPTypes
import Hummingbird

/// Puts the request's ID (the one in every log line of the request, `hb.request.id`) on its
/// response as `X-Request-ID`, errors included, so that a person reporting a failure can quote it and
/// an operator can find its log lines.
struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {
    static var header: HTTPField.Name { HTTPField.Name("X-Request-ID")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response = try await next(request, context)
        response.headers[Self.header] = context.id
        return response
    }
}
