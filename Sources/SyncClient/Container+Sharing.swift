import Foundation
import SyncCore
import SyncCrypto

/// Sharing with other accounts, as CloudKit's `CKShare`s: the owner shares a zone of their private
/// database (a zone-wide share), or a record and the records below it (a record-hierarchy share),
/// and hands out the share's invitation; someone invited reads its metadata and accepts it, and the
/// zone (or those records of it) appears in their ``sharedCloudDatabase``.
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

    /// Shares `rootRecord` and every record whose parent chain leads to it with `participants`
    /// (`CKShare(rootRecord:)`, saved with its root), or changes who its share is shared with. The
    /// root is saved in the same request as a new share, with `ifServerRecordUnchanged`, and comes
    /// back updated in place: its new change tag and its ``Record/share``.
    ///
    /// Throws `alreadyShared` when the root is in another share (or its zone is shared whole), and
    /// the root's save error (`serverRecordChanged` …) when it cannot be saved.
    @discardableResult
    public func share(
        _ rootRecord: Record, with participants: [SaveShareRequest.Invitee],
        publicPermission: ShareParticipant.Permission = .none
    ) async throws -> (share: Share, invitation: ShareInvitation) {
        let zoneID = rootRecord.recordID.zoneID
        let existing = rootRecord.share?.recordID.recordName
        var request = SaveShareRequest(
            zoneID: zoneID, publicPermission: publicPermission, participants: participants,
            rootRecord: existing == nil ? try await privateCloudDatabase.outgoing(rootRecord.value) : nil,
            shareRecordName: existing)
        var share = try await privateClient.saveShare(request)
        let saved = try await privateCloudDatabase.record(for: rootRecord.recordID)
        rootRecord.update { $0 = saved.value }
        let invitation = try await keyring?.invitation(for: zoneID, token: share.token, client: privateClient)
        if share.invitationKey == nil, let key = invitation?.key {
            // A new share of an encrypted zone: leave the zone's key with it, for the invitation to open.
            request.rootRecord = nil
            request.shareRecordName = share.recordName
            request.invitationKey = key
            share = try await privateClient.saveShare(request)
        }
        return (share, ShareInvitation(serverURL: serverURL, token: share.token, secret: invitation?.secret))
    }

    /// A share of the private database by its record ID: a zone's zone-wide share, or the share a
    /// root's ``Record/share`` names. Nil when there is none.
    public func share(withID shareID: Record.ID) async throws -> Share? {
        do {
            return try await privateClient.fetchShare(Self.shareRequest(shareID))
        } catch let error as SyncError where error.code == .unknownItem {
            return nil
        }
    }

    /// Deletes a share of the private database: its participants lose what it shared; a record
    /// hierarchy's root stays, no longer shared.
    public func deleteShare(withID shareID: Record.ID) async throws {
        try await privateClient.deleteShare(Self.shareRequest(shareID))
    }

    private static func shareRequest(_ shareID: Record.ID) -> ShareZoneRequest {
        ShareZoneRequest(
            zoneID: shareID.zoneID,
            shareRecordName: shareID.recordName == Share.zoneWideRecordName ? nil : shareID.recordName)
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
