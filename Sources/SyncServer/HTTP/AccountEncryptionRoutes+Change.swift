import Foundation
import Hummingbird
import SyncCore

extension AccountEncryptionRoutes {
    /// `POST /v1/account/encryption/change`: a passphrase change. The new settings replace the old
    /// and every key the old account key wrapped is replaced by the same key wrapped by the new
    /// one, in one transaction (``PassphraseChange`` says what is refused). No record changes.
    ///
    /// The account's other devices are told (`databaseChanged` on both databases: each re-wrapped
    /// zone is a change of the zone), and at their next sync they find settings of a newer key
    /// version, which is how they learn the passphrase changed. A retry of a change applied
    /// already answers the same settings and writes nothing.
    func change(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let device = try DatabaseRoutes.deviceID(request)
        let change = try await body.decode(EncryptionChangeRequest.self, from: request)
        try PassphraseChange.validate(change, owner: user)
        let (settings, applied) = try await store.changeEncryption(
            owner: user, change, now: configuration.clock.now())
        if applied {
            await pushHub.notify(user: user, scope: .private, excludingDevice: device)
            await pushHub.notify(user: user, scope: .shared, excludingDevice: device)
        }
        return try body.response(settings)
    }
}
