import Crypto
import Foundation
import Hummingbird
import SyncCore

/// The routes under `/v1/account/encryption/recovery`: a recovery key, which opens the account key after
/// the passphrase is lost. The server keeps the recovery key's public half and tag (which every device of
/// the account sees with the settings), the account key sealed to it, and the SHA-256 of its verifier. It
/// hands the sealed account key only to a request that shows the verifier, and counts wrong ones like wrong
/// passwords, per account and per address (``SignInThrottle``). It never sees the recovery key or an account
/// key.
struct AccountRecoveryRoutes {
    let store: any RecordStore
    let body: BodyCoding
    let throttle: SignInThrottle

    init(store: any RecordStore, configuration: SyncServerConfiguration, body: BodyCoding) {
        self.store = store
        self.body = body
        throttle = SignInThrottle(
            usernames: configuration.usernameSignInThrottle, addresses: configuration.addressSignInThrottle,
            clock: configuration.clock)
    }

    /// `PUT /v1/account/encryption/recovery`: a new recovery key, replacing the account's (if any).
    func setUp(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let setUp = try await body.decode(RecoveryKeyRequest.self, from: request)
        guard let hash = setUp.setup.verifierHash else {
            throw SyncError(
                .invalidArguments, "setup.verifierHash is missing: a new recovery key needs its verifier's SHA-256")
        }
        let stored = StoredRecovery(
            recovery: setUp.setup.recovery, sealedAccountKey: setUp.setup.sealedAccountKey, verifierHash: hash)
        return try body.response(
            try await store.setRecovery(owner: user, expectedKeyVersion: setUp.expectedKeyVersion, stored))
    }

    /// `POST /v1/account/encryption/recovery/open`: the account key sealed to the recovery key, for a
    /// request showing the recovery key's verifier.
    func open(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let address = context.remoteAddress
        if let wait = throttle.wait(username: user, address: address) {
            throw SyncError(
                .requestRateLimited,
                "too many wrong recovery keys for this account or from this address; retry in \(AuthenticationMiddleware.format(wait)) s",
                retryAfter: wait)
        }
        let open = try await body.decode(RecoveryOpenRequest.self, from: request)
        guard let stored = try await store.recovery(owner: user),
            let settings = try await store.encryptionSettings(owner: user)
        else {
            throw SyncError(
                .unknownItem,
                "this account has no recovery key: none was set up (`contacts account recovery-key` on a device with the passphrase), so only a reset of encrypted data is left"
            )
        }
        let shown = Data(SHA256.hash(data: open.verifier))
        // Compared in constant time: how long the answer takes says nothing of how much of it matched.
        guard shown.count == stored.verifierHash.count,
            zip(shown, stored.verifierHash).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0
        else {
            throttle.recordFailure(username: user, address: address)
            throw SyncError(
                .permissionFailure,
                "this is not the account's recovery key; check each word (wrong keys are counted and, after a few, refused for a while)"
            )
        }
        throttle.recordSuccess(username: user)
        return try body.response(
            RecoveryOpenResponse(keyVersion: settings.keyVersion, sealedAccountKey: stored.sealedAccountKey))
    }
}
