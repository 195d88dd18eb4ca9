import Foundation
import Hummingbird
import SyncCore

/// The routes under `/v1/account/encryption`: the account's encryption settings, which devices
/// share through the server, and the reset of encrypted data after a lost passphrase.
///
/// The server never sees a passphrase or a key. The settings (salt, key derivation parameters, a
/// verifier) and the zones' wrapped keys are opaque bytes to it, stored for the account's devices.
struct AccountEncryptionRoutes {
    let store: any RecordStore
    let pushHub: PushHub
    let configuration: SyncServerConfiguration
    let body: BodyCoding

    /// `GET /v1/account/encryption`: the settings, or `404 unknownItem` when none are set up.
    func settings(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        guard let settings = try await store.encryptionSettings(owner: user) else {
            throw SyncError(
                .unknownItem,
                "this account has no encryption settings yet: no device has set up encrypted data; the first device to do so sends them with PUT /v1/account/encryption"
            )
        }
        return try body.response(settings)
    }

    /// `PUT /v1/account/encryption`: stores the settings when the account has none (`201`).
    ///
    /// Settings equal to the stored ones answer `200` (a retry of the request that stored them).
    /// Others are refused with `409 serverRecordChanged` carrying the stored settings: that is
    /// CloudKit's code for "your save lost to what the server holds, which is included", and the
    /// device's remedy is the same as for a record: adopt the server's copy (here, derive the key
    /// from the stored settings) rather than overwrite it. `constraintViolation`, the other 409,
    /// carries nothing to adopt. Replacing settings would strand every key wrapped under them,
    /// so only a reset removes them.
    func createSettings(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let settings = try await body.decode(AccountEncryptionSettings.self, from: request)
        guard settings.keyPair == nil else {
            throw SyncError(
                .invalidArguments,
                "keyPair: settings are stored without a key pair; once they are, publish the key pair with PUT /v1/account/encryption/key-pair"
            )
        }
        guard
            let existing = try await store.createEncryptionSettings(
                owner: user, settings, now: configuration.clock.now())
        else {
            return try body.response(settings, status: .created)
        }
        guard existing.withoutKeyPair == settings else {
            throw SyncError(
                .serverRecordChanged,
                "this account has encryption settings already (another device set them up); use those (included as serverEncryptionSettings) with the account's passphrase, or reset encrypted data to start again",
                serverEncryptionSettings: existing)
        }
        return try body.response(existing)
    }

    /// `PUT /v1/account/encryption/key-pair`: publishes the account's key pair when it has none
    /// (`201`); the public key is then in every answer that identifies the account.
    ///
    /// As with the settings: the same key pair again answers `200` (a retry), another answers
    /// `409 serverRecordChanged` carrying the stored settings with their key pair (another device
    /// published first: adopt that one), and an account without settings answers `404 unknownItem`
    /// (no account key exists to wrap the private key). Only a reset removes a key pair; a
    /// passphrase change re-wraps its private key, never replaces it.
    func createKeyPair(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let keyPair = try await body.decode(AccountKeyPair.self, from: request)
        switch try await store.createKeyPair(owner: user, keyPair) {
        case .created:
            return try body.response(keyPair, status: .created)
        case .noSettings:
            throw SyncError(
                .unknownItem,
                "this account has no encryption settings yet, so no account key can have wrapped this private key; set up encrypted data first (PUT /v1/account/encryption)"
            )
        case .exists(let settings):
            guard settings.keyPair != keyPair else { return try body.response(keyPair) }
            throw SyncError(
                .serverRecordChanged,
                "this account has a key pair already (another device published it); use that one (included in serverEncryptionSettings as keyPair), which the account key opens",
                serverEncryptionSettings: settings)
        }
    }

    /// `POST /v1/account/encryption/reset`: forgets the settings (and the key pair) and deletes
    /// every zone of the private database that has an encryption key, with the reason
    /// `encryptedDataReset`.
    func reset(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let device = try DeviceID.validated(
            request.headers[DatabaseRoutes.deviceHeader], source: "the X-Device-ID header")
        try await body.checkOptionalObject(in: request)
        let deleted = try await store.resetEncryptedData(owner: user, now: Date())
        if !deleted.isEmpty {
            await pushHub.notify(user: user, scope: .private, excludingDevice: device)
        }
        await DatabaseRoutes.purgeRecords(ofDeletedZones: deleted, owner: user, store: store, context: context)
        return try body.response(
            EncryptedDataResetResponse(deletedZoneIDs: deleted.map { RecordZone.ID(zoneName: $0) }))
    }
}
