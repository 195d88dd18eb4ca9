import Foundation
import SyncCore

/// What a sync server answered to one request: its status, headers and body.
public struct HTTPAnswer: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: Data

    public init(status: Int, headers: [(String, String)], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// The error body, when the answer is one. Read as strictly as every other answer (``JSONReader``).
    public var error: SyncError? { try? JSONReader.decode(SyncError.self, from: body) }

    /// A `Retry-After` the client can honour; a wait no client could ("inf", "1e308") is ignored.
    public var retryAfter: Double? {
        header("Retry-After").flatMap(Double.init).flatMap { SyncError.isValid(retryAfter: $0) ? $0 : nil }
    }

    /// `nil` for a successful answer; otherwise the server's error, or one made from the status
    /// when the body is not an error.
    public var failure: SyncError? {
        guard !(200..<300).contains(status) else { return nil }
        if var error {
            if error.retryAfter == nil { error.retryAfter = retryAfter }
            return error
        }
        let code: SyncError.Code =
            switch status {
            case 401: .notAuthenticated
            case 429: .requestRateLimited
            case 502, 503, 504: .serviceUnavailable
            default: .internalError
            }
        return SyncError(code, "the server answered HTTP \(status) without an error body", retryAfter: retryAfter)
    }

    /// The body of a successful answer decoded as `T`; the server's error otherwise.
    public func decoded<T: Decodable>(as type: T.Type) throws -> T {
        if let failure { throw failure }
        return try JSONReader.decode(T.self, from: body)
    }
}
