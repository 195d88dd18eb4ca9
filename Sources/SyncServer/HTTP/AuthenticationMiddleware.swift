import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import SyncCore

/// Requires `Authorization: Bearer <token>` of a live session of an enabled account, then applies
/// the user's rate limit and records the session's use and address (which moves its end, see
/// ``SessionLifetime``). A token of a session that ended is told why (``SessionRefusal``).
struct AuthenticationMiddleware: RouterMiddleware {
    let store: any RecordStore
    let rateLimiter: RateLimiter
    let sessions: SessionLifetime

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
        // Read at every request, never cached: an operator's disable (another process, on the same
        // storage) holds from the account's next request.
        let session: StoredSession
        switch try await store.sessionState(tokenHash: tokenHash) {
        case .unknown:
            throw SessionRefusal.unknown
        case .ended(let reason):
            throw SessionRefusal.error(for: reason)
        case .live(_, accountDisabled: true):
            throw SessionRefusal.error(for: .accountDisabled)
        case .live(let live, accountDisabled: false):
            session = live
        }
        let now = sessions.clock.now()
        if sessions.hasEnded(session, at: now) {
            _ = try await store.endSessions(
                userRecordName: session.userRecordName, id: session.id, sparing: nil, reason: .sessionExpired, at: now)
            throw SessionRefusal.error(for: .sessionExpired, lifetime: sessions.whyEnded(session))
        }
        let user = session.userRecordName
        if let wait = rateLimiter.acquire(user) {
            throw SyncError(
                .requestRateLimited, "too many requests from this account; retry in \(Self.format(wait)) s",
                retryAfter: wait)
        }
        if sessions.needsTouch(session, at: now) {
            try await store.touchSession(tokenHash: tokenHash, usedAt: now, address: context.remoteAddress)
        }
        var context = context
        context.userRecordName = user
        context.sessionTokenHash = tokenHash
        context.sessionID = session.id
        return try await next(request, context)
    }

    /// Session tokens are stored only as their SHA-256, so a copy of the database signs nobody in.
    static func hash(token: String) -> String {
        Hexadecimal.lowercase(SHA256.hash(data: Data(token.utf8)))
    }

    static func format(_ seconds: Double) -> String {
        String(format: "%.2f", seconds)
    }
}

/// Applies a per-address rate limit to routes anyone can call (account creation, sign-in).
///
/// The address is the connection's: a header such as `X-Forwarded-For` is the client's to forge.
struct AddressRateLimitMiddleware: RouterMiddleware {
    let rateLimiter: RateLimiter
    /// What the limit counts, for the message: "attempts", "account creations".
    var counting = "attempts"

    func handle(
        _ request: Request, context: SyncRequestContext,
        next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        if let wait = rateLimiter.acquire(context.remoteAddress) {
            throw SyncError(
                .requestRateLimited,
                "too many \(counting) from this address; retry in \(AuthenticationMiddleware.format(wait)) s",
                retryAfter: wait)
        }
        return try await next(request, context)
    }
}
