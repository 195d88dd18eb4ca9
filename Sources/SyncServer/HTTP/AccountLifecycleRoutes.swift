import Foundation
import Hummingbird
import SyncCore

/// `PUT /v1/account/password` and `POST /v1/account/delete`: the two changes that ask for the
/// password again, checked exactly as at sign-in (``PasswordCheck``, whose throttle they share),
/// so that a stolen token alone can neither lock the owner out nor destroy the account.
struct AccountLifecycleRoutes {
    let store: any RecordStore
    let pushHub: PushHub
    let configuration: SyncServerConfiguration
    let body: BodyCoding
    let passwords: PasswordCheck

    func changePassword(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        guard let current = context.sessionTokenHash else { throw HTTPError(.unauthorized) }
        let change = try await body.decode(PasswordChange.self, from: request)
        do {
            try PasswordCheck.validate(password: change.newPassword)
        } catch var error as SyncError {
            error.message = "newPassword: " + error.message
            throw error
        }
        try await checkPassword(change.oldPassword, user: user, context: context, refused: "the password is unchanged")
        let hash = try await passwords.hash(password: change.newPassword)
        let ended = try await store.changePassword(
            userRecordName: user, passwordHash: hash, sparing: current, at: configuration.clock.now())
        for tokenHash in ended { await pushHub.closeSession(tokenHash) }
        return Response(status: .noContent)
    }

    func deleteAccount(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let deletion = try await body.decode(AccountDeletion.self, from: request)
        try await checkPassword(deletion.password, user: user, context: context, refused: "nothing was deleted")
        try await AccountRemoval(store: store, pushHub: pushHub).remove(
            userRecordName: user, now: configuration.clock.now())
        return Response(status: .noContent)
    }

    /// Throws `permissionFailure` unless `password` is the account's (not `notAuthenticated`: the
    /// session itself is fine, and a client must not take a typo for a signed-out device).
    private func checkPassword(_ password: String, user: String, context: SyncRequestContext, refused: String)
        async throws
    {
        guard let account = try await store.account(userRecordName: user) else {
            throw SessionRefusal.error(for: .accountDeleted)
        }
        let checked = try await passwords.account(
            username: account.username, password: password, address: context.remoteAddress)
        guard checked?.userRecordName == user else {
            throw SyncError(.permissionFailure, "the password is wrong; \(refused)")
        }
    }
}
