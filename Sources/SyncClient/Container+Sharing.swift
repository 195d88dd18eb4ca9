import Foundation
import SyncCore
import SyncCrypto

/// Sharing zones with other accounts, as CloudKit's zone-wide `CKShare`s: the owner shares a zone of
/// their private database and hands out the share's invitation; someone invited reads its metadata
/// and accepts it, and the zone appears in their ``sharedCloudDatabase``.
extension Container {
    private var privateClient: DatabaseClient { DatabaseClient(database: privateCloudDatabase) }

    /// The accounts with these names (to invite them), each name with its account or its error
    /// (`unknownItem` for no such account).
    public func userIdentities(forUsernames usernames: [String]) async throws -> [String: Result<
        AccountInfo, any Error
    >] {
        let response = try await privateClient.lookupUsers(LookupUsersRequest(usernames: usernames))
        var results: [String: Result<AccountInfo, any Error>] = [:]
        for user in response.users { results[user.username] = .success(user) }
        for failure in response.failures { results[failure.username] = .failure(failure.error) }
        return results
    }

    /// Shares a zone of the private database with `participants`, or changes who it is shared with
    /// (people left out lose it). Returns the share and the invitation to hand to them.
    @discardableResult
    public func share(
        _ zoneID: RecordZone.ID, with participants: [SaveShareRequest.Invitee],
        publicPermission: ShareParticipant.Permission = .none
    ) async throws -> (share: Share, invitation: ShareInvitation) {
        var share = try await privateClient.saveShare(
            SaveShareRequest(zoneID: zoneID, publicPermission: publicPermission, participants: participants))
        let invitation = try await keyring?.invitation(for: zoneID, token: share.token, client: privateClient)
        if share.invitationKey == nil, let key = invitation?.key {
            // A new share of an encrypted zone: leave the zone's key with it, for the invitation to open.
            share = try await privateClient.saveShare(
                SaveShareRequest(
                    zoneID: zoneID, publicPermission: publicPermission, participants: participants, invitationKey: key))
        }
        return (share, ShareInvitation(serverURL: serverURL, token: share.token, secret: invitation?.secret))
    }

    /// The invitation of one of the signed-in user's shares: the same every time it is asked for.
    public func invitation(for share: Share) async throws -> ShareInvitation {
        let secret = try await keyring?.invitation(for: share.zoneID, token: share.token, client: privateClient)?.secret
        return ShareInvitation(serverURL: serverURL, token: share.token, secret: secret)
    }

    /// The share of a zone of the private database; nil when it is not shared.
    public func share(for zoneID: RecordZone.ID) async throws -> Share? {
        do {
            return try await privateClient.fetchShare(ShareZoneRequest(zoneID: zoneID))
        } catch let error as SyncError where error.code == .unknownItem {
            return nil
        }
    }

    /// Stops sharing a zone of the private database: it leaves every participant's shared database.
    public func deleteShare(for zoneID: RecordZone.ID) async throws {
        try await privateClient.deleteShare(ShareZoneRequest(zoneID: zoneID))
    }

    /// What an invitation opens (`CKContainer.shareMetadata(for:)`): the share, its owner, and the
    /// signed-in user's place in it. Throws `unknownItem` for a share not open to them.
    public func shareMetadata(for invitation: ShareInvitation) async throws -> ShareMetadata {
        try await privateClient.shareMetadata(ShareTokenRequest(token: invitation.token))
    }

    /// Accepts a share (`CKContainer.accept(_:)`): its zone appears in ``sharedCloudDatabase``. For
    /// an encrypted zone the invitation's key is opened here and the zone's key kept, wrapped by
    /// this account's key; the server never holds it open.
    @discardableResult
    public func accept(_ invitation: ShareInvitation) async throws -> ShareMetadata {
        let metadata = try await shareMetadata(for: invitation)
        let sharedZoneID = metadata.share.zoneID
        var key: RecordZone.EncryptionKey?
        if let invitationKey = metadata.share.invitationKey {
            guard let secret = invitation.secret else {
                throw SyncError(
                    .invalidArguments,
                    "the shared zone is encrypted, but this invitation has no key (the part after '#'); ask its owner for the whole invitation"
                )
            }
            guard let keyring else {
                throw SyncError(
                    .notAuthenticated,
                    "the shared zone is encrypted and this device has no passphrase; set this account's passphrase first"
                )
            }
            key = try await keyring.participantKey(
                from: invitationKey, secret: secret, sharedZoneID: sharedZoneID,
                client: DatabaseClient(database: sharedCloudDatabase))
        }
        let accepted = try await DatabaseClient(database: sharedCloudDatabase).acceptShare(
            ShareTokenRequest(token: invitation.token, encryptionKey: key))
        keyring?.forget(zoneIDs: [sharedZoneID])
        return accepted
    }
}
