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
    ///
    /// For a zone with encrypted values, the zone's keys are then wrapped to each participant's public
    /// key, and a new key version is made whenever the people holding the newest one change (so someone
    /// left out cannot open anything written afterwards): see ``updateZoneKeys(for:)``. The invitation of
    /// a private share carries no secret; a public link share's (`publicPermission` other than `.none`)
    /// carries the link secret in its fragment. Participants whose accounts publish no public key yet are
    /// given the keys by the owner's next upkeep after they have one.
    @discardableResult
    public func share(
        _ zoneID: RecordZone.ID, with participants: [SaveShareRequest.Invitee],
        publicPermission: ShareParticipant.Permission = .none
    ) async throws -> (share: Share, invitation: ShareInvitation) {
        var share = try await privateClient.saveShare(
            SaveShareRequest(zoneID: zoneID, publicPermission: publicPermission, participants: participants))
        if keyring != nil {
            let upkeep = try await keepZoneKeys(for: zoneID, share: share, forceRotation: false)
            if upkeep.newestVersion != nil { share = try await self.share(for: zoneID) ?? share }
        }
        return (share, try await invitation(for: share))
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
        if let keyring, let chain = try await keyring.currentOwnChain(for: zoneID, client: privateClient) {
            // A record hierarchy's participants get the zone's newest chain wrapped to their public keys
            // (rotation on removal is kept for zone-wide shares, see `updateZoneKeys(for:)`).
            var wrapped = false
            request.rootRecord = nil
            request.shareRecordName = share.recordName
            let (keys, _) = try await checkedPublicKeys(
                of: share.participants.filter { $0.role == .privateUser && $0.acceptanceStatus != .removed })
            for index in request.participants.indices {
                let name = request.participants[index].userRecordName
                guard let key = keys[name],
                    share.participants.first(where: { $0.userRecordName == name })?.sharedKeyVersion
                        != chain.newest.version
                else { continue }
                request.participants[index].encryptionKey = try await keyring.wrap(
                    chain, toParticipant: name, publicKey: key, zoneName: zoneID.zoneName, shareToken: share.token,
                    client: privateClient)
                wrapped = true
            }
            if publicPermission != .none {
                request.invitationKey = keyring.linkInvitation(chain, token: share.token, zoneName: zoneID.zoneName).key
                wrapped = true
            }
            if wrapped { share = try await privateClient.saveShare(request) }
        }
        return (share, try await invitation(for: share))
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

    /// The invitation of one of the signed-in user's shares: the same every time it is asked for, until
    /// the zone's keys are rotated. Only a public link share's carries a secret (the link secret, derived
    /// from the newest key); people invited by name open the keys with their own key pairs.
    public func invitation(for share: Share) async throws -> ShareInvitation {
        var secret: InvitationSecret?
        if share.publicPermission != .none, let keyring,
            let chain = try await keyring.currentOwnChain(for: share.zoneID, client: privateClient)
        {
            secret = keyring.linkInvitation(chain, token: share.token, zoneName: share.zoneID.zoneName).secret
        }
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

    /// Stops sharing a zone of the private database: it leaves every participant's shared database, and
    /// (for a zone with encrypted values) a new key version seals what is written afterwards.
    public func deleteShare(for zoneID: RecordZone.ID) async throws {
        try await privateClient.deleteShare(ShareZoneRequest(zoneID: zoneID))
        if keyring != nil { try await keepZoneKeys(for: zoneID, share: nil, forceRotation: false) }
    }

    /// What an invitation opens (`CKContainer.shareMetadata(for:)`): the share, its owner, and the
    /// signed-in user's place in it. Throws `unknownItem` for a share not open to them.
    public func shareMetadata(for invitation: ShareInvitation) async throws -> ShareMetadata {
        try await privateClient.shareMetadata(ShareTokenRequest(token: invitation.token))
    }

    /// The shares this account is invited to by name and has neither accepted nor declined, each with
    /// its owner's identity and public key as the server gives them (compare its
    /// ``KeyFingerprint`` with the owner before accepting). Accept one with
    /// ``accept(_:)`` and ``ShareInvitation/init(serverURL:token:secret:)`` of its token.
    public func invitations() async throws -> [ShareMetadata] {
        try await privateClient.invitations().invitations
    }

    /// Turns down an invitation by name: the share can no longer be accepted with it (its owner invites
    /// this account again to undo that). Throws `unknownItem` for an invitation not open to this account,
    /// `invalidArguments` for a share it accepted (leave it instead: delete its zone from
    /// ``sharedCloudDatabase``).
    public func decline(_ invitation: ShareInvitation) async throws {
        try await privateClient.declineShare(ShareTokenRequest(token: invitation.token))
    }

    /// Accepts a share (`CKContainer.accept(_:)`): its zone appears in ``sharedCloudDatabase``. For
    /// an encrypted zone the keys the owner wrapped to this account's public key are opened here, as
    /// coming from the owner's public key in the share's metadata (which this account pins from now on),
    /// and kept in this account's own slot, wrapped by its account key; the server never holds them open.
    /// A public link share's keys open with the link's secret instead (the part after '#').
    @discardableResult
    public func accept(_ invitation: ShareInvitation) async throws -> ShareMetadata {
        let metadata = try await shareMetadata(for: invitation)
        let sharedZoneID = metadata.share.zoneID
        let sharedClient = DatabaseClient(database: sharedCloudDatabase)
        let ownerKey = metadata.ownerIdentity.publicKey.flatMap { AccountIdentityKey.isPublicKey($0) ? $0 : nil }
        // The owner's key as the server gives it now is the one this share's keys are opened with and
        // pinned to: one other than the key verified for the owner is refused before anything is accepted.
        if let ownerKey {
            try keyring?.knownKeys?.check(metadata.ownerIdentity, publicKey: ownerKey)
        } else {
            try keyring?.knownKeys?.checkMissingKey(of: metadata.ownerIdentity)
        }
        var key: RecordZone.EncryptionKey?
        if let invitationKey = metadata.share.invitationKey, let secret = invitation.secret {
            guard let keyring else {
                throw SyncError(
                    .notAuthenticated,
                    "the shared zone is encrypted and this device has no passphrase; set this account's passphrase first"
                )
            }
            var chain = try keyring.invitationChain(from: invitationKey, secret: secret, sharedZoneID: sharedZoneID)
            chain.pinnedOwnerKey = ownerKey
            chain.shareToken = invitation.token
            key = try await keyring.ownSlot(chain, for: sharedZoneID, client: sharedClient)
        } else if metadata.share.invitationKey != nil, metadata.share.publicPermission != .none,
            metadata.participantRole != .privateUser
        {
            throw SyncError(
                .invalidArguments,
                "the shared zone is encrypted, but this invitation has no key (the part after '#'); ask its owner for the whole invitation"
            )
        }
        var accepted = try await sharedClient.acceptShare(
            ShareTokenRequest(token: invitation.token, encryptionKey: key))
        keyring?.forget(zoneIDs: [sharedZoneID])
        if key == nil, let keyring,
            let zone = try await sharedClient.listZones().zones.first(where: { $0.zoneID == sharedZoneID }),
            zone.sharedKey != nil || zone.encryptionKey != nil
        {
            if zone.sharedKey != nil, ownerKey == nil {
                throw SyncError(
                    .notAuthenticated,
                    "the share is accepted, but its owner's account publishes no public key, so the book's keys cannot be checked; ask the owner to sync with this version, then accept again"
                )
            }
            // Opens the owner's wrap with the owner's key from the metadata, pinned from now on, and
            // keeps the chain in this share's own slot (a zone shared record by record has one per share).
            var chain = try await keyring.participantChain(for: zone, client: sharedClient, ownerKey: ownerKey)
            chain.pinnedOwnerKey = chain.pinnedOwnerKey ?? ownerKey
            chain.shareToken = invitation.token
            accepted = try await sharedClient.acceptShare(
                ShareTokenRequest(
                    token: invitation.token,
                    encryptionKey: try await keyring.ownSlot(chain, for: sharedZoneID, client: sharedClient)))
            keyring.forget(zoneIDs: [sharedZoneID])
        }
        return accepted
    }
}
