import Foundation
import SyncCore
import SyncCrypto

/// Handing a zone's keys to the people it is shared with, without the server ever holding them open:
/// the owner wraps the zone's chain to each participant's public key (HPKE, authenticated by the
/// owner's private key); a participant opens it only as coming from the owner's public key they pinned
/// when they accepted, and keeps the chain in their own slot, wrapped by their account key. A public
/// link share also leaves the chain wrapped by the link's secret, which travels in the URL's fragment.
extension Keyring {
    // MARK: Owner

    /// The owner's chain of an own zone as the server has it now (another device may have rotated it);
    /// nil when the zone has no key (nothing in it is encrypted).
    func currentOwnChain(for zoneID: RecordZone.ID, client: DatabaseClient) async throws -> ZoneKeyChain? {
        guard let zone = try await client.listZones().zones.first(where: { $0.zoneID == zoneID }),
            zone.encryptionKey != nil
        else { return nil }
        let chain = try ownChain(of: zone, accountKey: try await accountKey(client: client))
        hold(chain, for: zoneID)
        return chain
    }

    /// Stores `chain` rotated to a new version, given to `holders`, as the zone's keys. Returns the
    /// chain the server kept: ours, or (when another device rotated at the same time and stored first)
    /// theirs, which the caller looks at again.
    func storeRotation(
        of chain: ZoneKeyChain, holders: Set<String>, for zoneID: RecordZone.ID, client: DatabaseClient
    ) async throws -> (chain: ZoneKeyChain, isOurs: Bool) {
        var rotated: ZoneKeyChain
        do {
            rotated = try chain.rotated()
        } catch let error as EncryptionError {
            throw SyncError(.limitExceeded, "the keys of zone \(zoneID) cannot be rotated again: \(error.message)")
        }
        rotated.holders = holders
        let accountKey = try await accountKey(client: client)
        let zone = RecordZone(
            zoneID: zoneID,
            encryptionKey: RecordZone.EncryptionKey(
                keyVersion: rotated.newest.version,
                wrappedKey: rotated.wrapped(by: accountKey, zoneName: zoneID.zoneName, ownerName: zoneID.ownerName)))
        let stored = try ownChain(of: try await saveZone(zone, client: client), accountKey: accountKey)
        hold(stored, for: zoneID)
        let isOurs =
            stored.newest.version == rotated.newest.version && stored.agrees(with: rotated)
            && stored.holders == rotated.holders
        return (stored, isOurs)
    }

    /// `chain` wrapped to the participant whose public key is `publicKey`, from this account.
    func wrap(
        _ chain: ZoneKeyChain, toParticipant participantName: String, publicKey: Data, zoneName: String,
        shareToken: String, client: DatabaseClient
    ) async throws -> RecordZone.EncryptionKey {
        let identity = try await identityKey(client: client)
        let ownerName = try await userRecordName(client: client)
        do {
            return RecordZone.EncryptionKey(
                keyVersion: chain.newest.version,
                wrappedKey: try chain.wrapped(
                    toParticipant: publicKey, by: identity, ownerName: ownerName, participantName: participantName,
                    zoneName: zoneName, shareToken: shareToken))
        } catch let error as EncryptionError {
            throw SyncError(.invalidArguments, error.message)
        }
    }

    /// For a public link share: the link's secret (derived from the newest key and the share's token)
    /// and the chain wrapped by it.
    func linkInvitation(_ chain: ZoneKeyChain, token: String, zoneName: String) -> (
        secret: InvitationSecret, key: RecordZone.EncryptionKey
    ) {
        let secret = chain.invitationSecret(token: token)
        return (
            secret,
            RecordZone.EncryptionKey(
                keyVersion: chain.newest.version, wrappedKey: chain.wrapped(byInvitation: secret, zoneName: zoneName))
        )
    }

    // MARK: Participant

    /// A participant's chain of a shared zone: their own slot (wrapped by their account key), brought up
    /// to date with the chain the owner wrapped to them (``RecordZone/sharedKey``) when that is newer.
    /// The owner's wrap is taken only from the owner's public key pinned in the own slot, or `ownerKey`
    /// (from the share's metadata, while accepting). A slot written before key pairs has no pin: the
    /// owner's published key is pinned the first time it is needed, and only when the chain it opens
    /// holds the very keys the slot holds (so a key the server made up is refused).
    ///
    /// When the chain grew, it is written back to the own slot (with the share's token the owner's wrap
    /// carries), so that the next device or process starts from it.
    func participantChain(
        for zone: RecordZone, client: DatabaseClient, ownerKey: Data? = nil
    ) async throws -> ZoneKeyChain {
        let zoneID = zone.zoneID
        let accountKey = try await accountKey(client: client)
        var own: ZoneKeyChain?
        if let slot = zone.encryptionKey {
            do {
                own = try ZoneKeyChain(
                    unwrapping: slot.wrappedKey, with: accountKey, zoneName: zoneID.zoneName,
                    ownerName: zoneID.ownerName)
            } catch let error as EncryptionError {
                throw SyncError(
                    .internalError, "this account's key of shared zone \(zoneID) does not open: \(error.message)")
            }
        }
        guard let shared = zone.sharedKey,
            own == nil || own?.pinnedOwnerKey == nil || shared.keyVersion > own?.newest.version ?? 0
        else {
            if let own { return own }
            throw SyncError(
                .notAuthenticated,
                "this device holds no key for shared zone \(zoneID): accept the share's invitation on this account, or ask its owner to share it again"
            )
        }
        do {
            let chain = try await taking(shared, into: own, zoneID: zoneID, ownerKey: ownerKey, client: client)
            if let token = chain.shareToken {
                // The owner's wrap stays on the server: when this write fails, the next use tries again.
                _ = try? await client.acceptShare(
                    ShareTokenRequest(token: token, encryptionKey: ownSlot(chain, for: zoneID, accountKey: accountKey)))
            }
            return chain
        } catch {
            // Only the pin was missing (a slot from before key pairs) and the keys held still open everything
            // the zone has: keep them; the pin is taken at a later sync. A wrap that does not open as the
            // pinned owner's is never taken in: the keys held stay, and values sealed with a version they
            // lack do not open (each is reported where it is read).
            if let own, own.pinnedOwnerKey != nil || shared.keyVersion <= own.newest.version { return own }
            throw error
        }
    }

    /// The chain the owner wrapped to this account (`shared`), opened as coming from the pinned owner
    /// and merged into the own slot's chain.
    private func taking(
        _ shared: RecordZone.EncryptionKey, into own: ZoneKeyChain?, zoneID: RecordZone.ID, ownerKey: Data?,
        client: DatabaseClient
    ) async throws -> ZoneKeyChain {
        let pin: Data
        if let pinned = own?.pinnedOwnerKey ?? ownerKey {
            pin = pinned
        } else if own != nil {
            pin = try await publishedOwnerKey(of: zoneID, client: client)
        } else {
            throw SyncError(
                .notAuthenticated,
                "this device cannot check who wrapped the key of shared zone \(zoneID): accept the share's invitation again"
            )
        }
        let identity = try await identityKey(client: client)
        let me = try await userRecordName(client: client)
        let theirs: ZoneKeyChain
        do {
            theirs = try ZoneKeyChain(
                unwrapping: shared.wrappedKey, as: identity, pinnedOwnerKey: pin, ownerName: zoneID.ownerName,
                participantName: me, zoneName: zoneID.zoneName)
        } catch let error as EncryptionError {
            throw SyncError(.notAuthenticated, error.message)
        }
        guard let own else { return theirs }
        // A pin taken now (a slot from before key pairs) is trusted only because the owner's wrap holds
        // the keys this account already had, which the server never saw.
        guard own.agrees(with: theirs), own.pinnedOwnerKey != nil || theirs.key(version: own.newest.version) != nil
        else {
            throw SyncError(
                .notAuthenticated,
                "the keys the server offers for shared zone \(zoneID) are not the owner's (they do not match the keys this account holds); keep using this book as it is and ask its owner to check"
            )
        }
        var chain = try own.merging(theirs)
        chain.pinnedOwnerKey = pin
        chain.shareToken = theirs.shareToken ?? own.shareToken
        return chain
    }

    /// `chain` wrapped by this account's key as the participant's own slot of `sharedZoneID` (the zone as
    /// the shared database names it).
    func ownSlot(_ chain: ZoneKeyChain, for sharedZoneID: RecordZone.ID, client: DatabaseClient) async throws
        -> RecordZone.EncryptionKey
    {
        ownSlot(chain, for: sharedZoneID, accountKey: try await accountKey(client: client))
    }

    private func ownSlot(_ chain: ZoneKeyChain, for sharedZoneID: RecordZone.ID, accountKey: AccountKey)
        -> RecordZone.EncryptionKey
    {
        RecordZone.EncryptionKey(
            keyVersion: chain.newest.version,
            wrappedKey: chain.wrapped(
                by: accountKey, zoneName: sharedZoneID.zoneName, ownerName: sharedZoneID.ownerName))
    }

    /// For a participant accepting a link share (or a share made before key pairs, whose invitation
    /// carries a secret): the zone's chain, opened with the invitation's secret.
    func invitationChain(
        from invitationKey: RecordZone.EncryptionKey, secret: InvitationSecret, sharedZoneID: RecordZone.ID
    ) throws -> ZoneKeyChain {
        do {
            return try ZoneKeyChain(
                unwrapping: invitationKey.wrappedKey, withInvitation: secret, zoneName: sharedZoneID.zoneName)
        } catch let error as EncryptionError {
            throw SyncError(.invalidArguments, error.message)
        }
    }

    /// The public key the owner of a shared zone publishes, found through the zone's share record (which
    /// names the owner) and the account lookup. Trusted on first use: the caller checks it against keys it
    /// already holds.
    private func publishedOwnerKey(of zoneID: RecordZone.ID, client: DatabaseClient) async throws -> Data {
        let missing = SyncError(
            .notAuthenticated,
            "the owner of shared zone \(zoneID) publishes no public key yet: they have not used this version with their passphrase; until they do, new keys of the zone cannot be checked"
        )
        let shareID = RecordValue.ID(recordName: Share.zoneWideRecordName, zoneID: zoneID)
        let response = try await client.lookupRecords(LookupRecordsRequest(recordIDs: [shareID]))
        guard let record = response.records.first(where: { $0.recordID == shareID }),
            case .list(let entries)? = record.fields["participants"]
        else { throw missing }
        let owner = entries.lazy.compactMap { entry -> ShareParticipant? in
            guard case .string(let text) = entry else { return nil }
            return try? JSONReader.decode(ShareParticipant.self, from: Data(text.utf8))
        }.first { $0.role == .owner && $0.userRecordName == zoneID.ownerName }
        guard let owner else { throw missing }
        let found = try await client.lookupUsers(LookupUsersRequest(usernames: [owner.username]))
        guard let account = found.users.first(where: { $0.userRecordName == zoneID.ownerName }),
            let key = account.publicKey, AccountIdentityKey.isPublicKey(key)
        else { throw missing }
        return key
    }
}
