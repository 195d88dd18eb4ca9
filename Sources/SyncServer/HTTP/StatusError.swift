import HTTPTypes
import Hummingbird
import SyncCore

/// An error whose HTTP status is not the one its CloudKit code maps to, with the headers that status
/// calls for: `405` with `Allow`, `426` with `Upgrade`. ``ErrorMiddleware`` writes it with the usual
/// error body.
struct StatusError: Error {
    var error: SyncError
    var status: HTTPResponse.Status
    var headers: HTTPFields

    /// The error body with this status and these headers.
    var response: Response {
        var response = ErrorMiddleware<SyncRequestContext>.response(for: error, status: status)
        response.headers.append(contentsOf: headers)
        return response
    }
}
