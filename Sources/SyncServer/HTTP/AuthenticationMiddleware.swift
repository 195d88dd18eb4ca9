import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import SyncCore

/// Requires `Authorization: Bearer <token>` of a live session, then applies the user's rate limit.
struct AuthenticationMiddleware: RouterMiddleware {
    let store: any RecordStore
    let rateLimiter: RateLimiter

    func handle(
        _ request: Request, context: SyncRequestContext,
        next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw SyncError(
                .notAuthenticated, "this route needs 'Authorization: Bearer <token>'; sign in with POST /v1/sessions")
        }
        guard header.lowercased().hasPrefix("bearer "), case let token = header.dropFirst(7), !token.isEmpty else {
            throw SyncError(.notAuthenticated, "the Authorization header must read 'Bearer <token>'")
        }
        let tokenHash = Self.hash(token: String(token))
        guard let user = try await store.userRecordName(sessionTokenHash: tokenHash) else {
            throw SyncError(
                .notAuthenticated, "the session token is unknown or signed out; sign in again with POST /v1/sessions")
        }
        if let wait = rateLimiter.acquire(user) {
            throw SyncError(
                .requestRateLimited, "too many requests from this account; retry in \(Self.format(wait)) s",
                retryAfter: wait)
        }
        var context = context
        context.userRecordName = user
        context.sessionTokenHash = tokenHash
        return try await next(request, context)
    }

    /// Session tokens are stored only as their SHA-256, so a copy of the database signs nobody in.
    static func hash(token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    static func format(_ seconds: Double) -> String {
        String(format: "%.2f", seconds)
    }
}

/// Applies the per-address rate limit to routes anyone can call (account creation, sign-in).
struct AddressRateLimitMiddleware: RouterMiddleware {
    let rateLimiter: RateLimiter

    func handle(
        _ request: Request, context: SyncRequestContext,
        next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        if let wait = rateLimiter.acquire(context.remoteAddress) {
            throw SyncError(
                .requestRateLimited,
                "too many attempts from this address; retry in \(AuthenticationMiddleware.format(wait)) s",
                retryAfter: wait)
        }
        return try await next(request, context)
    }
}
