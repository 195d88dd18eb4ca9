import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import SyncCore

/// Turns every error into CloudKit's error body, `{"code": …, "message": …}`, with a fitting
/// HTTP status, so that no client mistake reaches the client as a bare 500.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as SyncError {
            return Self.response(for: error)
        } catch let error as StatusError {
            return error.response
        } catch let error as DecodingError {
            return Self.response(for: SyncError(.invalidArguments, Self.describe(error)))
        } catch let error as HTTPParserError {
            // A body the decoder could not read (a broken chunk): the client's fault, as before
            // any route (see HTTPRefusal).
            let refusal = HTTPRefusal.answering(error, maximumHeaderBytes: nil)
            return Self.response(for: refusal.error, status: HTTPResponse.Status(code: refusal.status))
        } catch is NIOTooManyBytesError {
            return Self.response(for: SyncError(.limitExceeded, "the request body is too large"))
        } catch let error as HTTPError {
            return Self.response(for: Self.syncError(from: error, request: request), status: error.status)
        } catch is CancellationError {
            // The request's work was stopped under it: its connection closed (nobody reads this), the
            // server shuts down, or a database pool closed for a failover. A client still waiting retries.
            context.logger.debug("request cancelled", metadata: ["path": "\(request.uri.path)"])
            return Self.response(for: Self.cancelled)
        } catch {
            // The full description: postgres-nio's plain one hides the server's message, which the
            // operator reading this log needs. It masks the bound values, but PostgreSQL's detail may
            // quote a key (a record or account name): this log is the operator's, never a client's.
            context.logger.error(
                "request failed", metadata: ["error": "\(String(reflecting: error))", "path": "\(request.uri.path)"])
            return Self.response(
                for: SyncError(
                    .internalError,
                    "the server failed to handle this request; try again, and report it if it keeps happening"))
        }
    }

    /// What a request whose work was stopped under it is told.
    static var cancelled: SyncError {
        SyncError(
            .serviceUnavailable, "the server stopped this request before it finished; try again shortly",
            retryAfter: 1)
    }

    /// The error body; `status` overrides the code's usual status (an unknown route is a 404, say).
    static func response(for error: SyncError, status: HTTPResponse.Status? = nil) -> Response {
        ServerMetrics.countError(code: error.code.rawValue)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let retryAfter = error.retryAfter, SyncError.isValid(retryAfter: retryAfter) {
            headers[.retryAfter] = String(Int(retryAfter.rounded(.up)))
        }
        let body = (try? JSONEncoder().encode(error)) ?? Data()
        return Response(
            status: status ?? HTTPResponse.Status(code: error.code.httpStatus), headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    private static func syncError(from error: HTTPError, request: Request) -> SyncError {
        switch error.status {
        case .notFound:
            return SyncError(
                .invalidArguments,
                "there is no \(request.method) \(request.uri.path) on this server; the routes are listed in openapi.yaml"
            )
        case .contentTooLarge:
            return SyncError(.limitExceeded, "the request body is too large; see GET /v1/limits")
        case .unauthorized:
            return SyncError(.notAuthenticated, error.body ?? "sign in first")
        default:
            return SyncError(.invalidArguments, error.body ?? "the request was not understood (\(error.status))")
        }
    }

    /// A message that names where in the body the problem is.
    static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            let text = codingPath.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
            return text.isEmpty ? "the body" : String(text.drop { $0 == "." })
        }
        switch error {
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return "the request body is not valid JSON; send a JSON object as described in openapi.yaml"
            }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is missing; it is required"
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)) has the wrong type; expected \(Self.name(of: type))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)) is null; expected \(Self.name(of: type))"
        @unknown default:
            return "the request body does not match the API: \(error)"
        }
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int64.Type, is Int.Type: "an integer"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        default: String(describing: type).contains("Array") ? "an array" : "an object"
        }
    }
}
