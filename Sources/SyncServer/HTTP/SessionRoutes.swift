import Foundation
import Hummingbird
import SyncCore

/// `GET /v1/account/sessions`, `DELETE /v1/account/sessions/{id}` and
/// `POST /v1/account/sessions/end-others`: the account's signed-in devices, and ending them.
///
/// A session ended here leaves a trace (see ``AccountStore``), so that its device is told
/// "this session was ended on another device" rather than "unknown token".
struct SessionRoutes {
    let store: any RecordStore
    let pushHub: PushHub
    let configuration: SyncServerConfiguration
    let body: BodyCoding

    /// The longest session ID a request may name (the server's are 32 hexadecimal digits).
    static let maximumIDLength = 64

    func list(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let sessions = try await store.sessions(userRecordName: user).map { tokenHash, session in
            SessionDescription(
                id: session.id, label: session.label, createdAt: session.createdAt.millisecondsSince1970,
                lastUsedAt: session.lastUsedAt.millisecondsSince1970, address: session.address,
                isCurrent: tokenHash == context.sessionTokenHash)
        }
        return try body.response(SessionList(sessions: sessions))
    }

    func end(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        guard let current = context.sessionTokenHash else { throw HTTPError(.unauthorized) }
        let id = context.parameters.get("id") ?? ""
        let unknown = SyncError(
            .unknownItem, "this account has no session with this ID; list them with GET /v1/account/sessions")
        guard (1...Self.maximumIDLength).contains(id.utf8.count) else { throw unknown }
        if id == context.sessionID {
            // Ending one's own session is signing out.
            try await store.deleteSession(tokenHash: current)
            await pushHub.closeSession(current)
            return Response(status: .noContent)
        }
        // Another account's session answers as one that does not exist: IDs reveal nothing.
        let ended = try await store.endSessions(
            userRecordName: user, id: id, sparing: current, reason: .sessionEnded, at: configuration.clock.now())
        guard !ended.isEmpty else { throw unknown }
        for tokenHash in ended { await pushHub.closeSession(tokenHash) }
        return Response(status: .noContent)
    }

    func endOthers(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        guard let current = context.sessionTokenHash else { throw HTTPError(.unauthorized) }
        let ended = try await store.endSessions(
            userRecordName: user, id: nil, sparing: current, reason: .sessionEnded, at: configuration.clock.now())
        for tokenHash in ended { await pushHub.closeSession(tokenHash) }
        return try body.response(EndedSessions(ended: ended.count))
    }
}
