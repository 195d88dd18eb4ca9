import Foundation
import SyncCore
import SyncCrypto

/// Handing a zone's key to the people it is shared with, without the server ever holding it open:
/// the owner wraps it by the share's invitation secret (derived from the zone key and the share's
/// token), which travels with the share's URL; a participant opens it with that secret once and
/// keeps it wrapped by their own account key.
extension Keyring {
    /// For the owner: the invitation secret of the share with URL token `token`, and the zone's key
    /// wrapped by it; nil when the zone has no key (nothing in it is encrypted).
    func invitation(for zoneID: RecordZone.ID, token: String, client: DatabaseClient) async throws -> (
        secret: InvitationSecret, key: RecordZone.EncryptionKey
    )? {
        guard try await client.listZones().zones.first(where: { $0.zoneID == zoneID })?.encryptionKey != nil else {
            return nil
        }
        let zoneKey = try await zoneKey(for: zoneID, client: client)
        let secret = InvitationSecret(zoneKey: zoneKey, token: token)
        return (
            secret,
            RecordZone.EncryptionKey(
                keyVersion: zoneKey.version,
                wrappedKey: zoneKey.wrapped(byInvitation: secret, zoneName: zoneID.zoneName))
        )
    }

    /// For a participant accepting a share: the zone's key, opened with the invitation's secret and
    /// wrapped by this account's key for `sharedZoneID` (the zone as the shared database names it).
    func participantKey(
        from invitationKey: RecordZone.EncryptionKey, secret: InvitationSecret, sharedZoneID: RecordZone.ID,
        client: DatabaseClient
    ) async throws -> RecordZone.EncryptionKey {
        let zoneKey: ZoneKey
        do {
            zoneKey = try ZoneKey(
                unwrapping: invitationKey.wrappedKey, withInvitation: secret, zoneName: sharedZoneID.zoneName)
        } catch let error as EncryptionError {
            throw SyncError(.invalidArguments, error.message)
        }
        let accountKey = try await accountKey(client: client)
        return RecordZone.EncryptionKey(
            keyVersion: zoneKey.version,
            wrappedKey: zoneKey.wrapped(
                by: accountKey, zoneName: sharedZoneID.zoneName, ownerName: sharedZoneID.ownerName))
    }
}
