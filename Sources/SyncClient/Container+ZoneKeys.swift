import Foundation
import SyncCore
import SyncCrypto

/// Keeping a shared zone's keys right, on the owner's devices: a new key version whenever the set of
/// people holding the newest one changes (someone removed or gone, someone new), the chain wrapped to
/// each participant's public key, and a link share's key re-wrapped by the link's new secret. Nothing is
/// sealed again: older values keep opening under their versions, and each is sealed with the newest key
/// when next edited.
///
/// Every change of holders is a new version because the server keeps an own zone's key until one of a
/// higher version replaces it: the holders are stored inside the owner's chain, so that any of the owner's
/// devices can tell later that one of them is gone.
extension Container {
    /// What ``updateZoneKeys(for:)`` or ``rotateZoneKey(for:)`` did.
    public struct ZoneKeyUpkeep: Sendable, Hashable {
        /// The newest key version after the call; nil when the zone has no keys (nothing in it is encrypted).
        public var newestVersion: Int?
        /// Whether the call (or another of the owner's devices, at the same time) made a new version.
        public var rotated: Bool
        /// The participants the chain was wrapped to now, by user record name.
        public var wrappedTo: Set<String>
        /// Participants who cannot be given the keys yet: their accounts publish no public key (they have
        /// not signed in with this version and their passphrase), or a key other than the one verified
        /// for them (``refusedKeys``). By user name.
        public var waitingForKeys: [String]
        /// Participants whose verified key the server no longer gives: they hold no newer key version until
        /// their new key is verified (``KnownKeys``).
        public var refusedKeys: [KeyChange]

        public init(
            newestVersion: Int?, rotated: Bool, wrappedTo: Set<String>, waitingForKeys: [String],
            refusedKeys: [KeyChange] = []
        ) {
            self.newestVersion = newestVersion
            self.rotated = rotated
            self.wrappedTo = wrappedTo
            self.waitingForKeys = waitingForKeys
            self.refusedKeys = refusedKeys
        }
    }

    /// Brings the keys of an own zone's zone-wide share up to date (run by the owner's devices on sync):
    /// rotates when someone who held the newest version is no longer a participant (removed, or left),
    /// or when new participants are to get it; wraps the chain to participants without the newest
    /// version; moves shares made before key pairs to the public-key wrapping. Does nothing (and sends
    /// nothing) when all is in order.
    @discardableResult
    public func updateZoneKeys(for zoneID: RecordZone.ID) async throws -> ZoneKeyUpkeep {
        try await keepZoneKeys(for: zoneID, share: nil, forceRotation: false)
    }

    /// Makes a new key version of an own zone, on demand: new values are sealed with it,
    /// the zone's participants receive it wrapped to their public keys, a link share gets a new link
    /// secret (retiring the old link). Nothing already sealed is sealed again.
    @discardableResult
    public func rotateZoneKey(for zoneID: RecordZone.ID) async throws -> ZoneKeyUpkeep {
        guard keyring != nil else {
            throw SyncError(
                .notAuthenticated,
                "this device has no passphrase, so it holds no keys to rotate; set the passphrase first")
        }
        let upkeep = try await keepZoneKeys(for: zoneID, share: nil, forceRotation: true)
        guard upkeep.newestVersion != nil else {
            throw SyncError(
                .invalidArguments,
                "zone \(zoneID) has no keys: nothing in it is encrypted yet, so there is nothing to rotate")
        }
        return upkeep
    }

    /// The upkeep behind both: `share` is the zone-wide share as just saved (nil: fetch it).
    func keepZoneKeys(for zoneID: RecordZone.ID, share knownShare: Share?, forceRotation: Bool) async throws
        -> ZoneKeyUpkeep
    {
        let client = DatabaseClient(database: privateCloudDatabase)
        guard let keyring, var chain = try await keyring.currentOwnChain(for: zoneID, client: client) else {
            return ZoneKeyUpkeep(newestVersion: nil, rotated: false, wrappedTo: [], waitingForKeys: [])
        }
        let share: Share?
        if let knownShare {
            share = knownShare
        } else {
            share = try await self.share(for: zoneID)
        }
        let targets = (share?.participants ?? []).filter { $0.role == .privateUser && $0.acceptanceStatus != .removed }
        let (publicKeys, refused) = try await checkedPublicKeys(of: targets)
        let keyed = Set(targets.map(\.userRecordName).filter { publicKeys[$0] != nil })
        var rotated = false
        var mustRotate = forceRotation
        for _ in 0..<3 where mustRotate || chain.holders != keyed {
            let (stored, isOurs) = try await keyring.storeRotation(
                of: chain, holders: keyed, for: zoneID, client: client)
            chain = stored
            rotated = true
            // Another device rotated at the same time: theirs counts as this rotation; look at it again.
            mustRotate = false
            if isOurs { break }
        }
        guard let share else {
            return ZoneKeyUpkeep(
                newestVersion: chain.newest.version, rotated: rotated, wrappedTo: [], waitingForKeys: [],
                refusedKeys: refused)
        }
        var wrappedTo: Set<String> = []
        var invitees: [SaveShareRequest.Invitee] = []
        for participant in targets {
            var invitee = SaveShareRequest.Invitee(
                userRecordName: participant.userRecordName, permission: participant.permission)
            if let publicKey = publicKeys[participant.userRecordName],
                rotated || participant.sharedKeyVersion != chain.newest.version
            {
                invitee.encryptionKey = try await keyring.wrap(
                    chain, toParticipant: participant.userRecordName, publicKey: publicKey, zoneName: zoneID.zoneName,
                    shareToken: share.token, client: client)
                wrappedTo.insert(participant.userRecordName)
            }
            invitees.append(invitee)
        }
        var linkKey: RecordZone.EncryptionKey?
        if share.publicPermission != .none,
            rotated || share.invitationKey?.keyVersion != chain.newest.version
                || share.invitationKey?.wrappedKey.first != ZoneKeyChain.invitationFormat
        {
            linkKey = keyring.linkInvitation(chain, token: share.token, zoneName: zoneID.zoneName).key
        }
        if !wrappedTo.isEmpty || linkKey != nil {
            _ = try await client.saveShare(
                SaveShareRequest(
                    zoneID: zoneID, publicPermission: share.publicPermission, participants: invitees,
                    invitationKey: linkKey))
        }
        return ZoneKeyUpkeep(
            newestVersion: chain.newest.version, rotated: rotated, wrappedTo: wrappedTo,
            waitingForKeys: targets.filter { publicKeys[$0.userRecordName] == nil }.map(\.username).sorted(),
            refusedKeys: refused)
    }

    /// The published public keys of `participants`, by user record name, each checked against the keys
    /// this device knows (``Keyring/knownKeys``); those without a usable one, or whose verified key
    /// changed (returned as refused), are left out.
    func checkedPublicKeys(of participants: [ShareParticipant]) async throws -> (
        keys: [String: Data], refused: [KeyChange]
    ) {
        guard !participants.isEmpty else { return ([:], []) }
        let client = DatabaseClient(database: privateCloudDatabase)
        let found = try await client.lookupUsers(LookupUsersRequest(usernames: participants.map(\.username)))
        let wanted = Set(participants.map(\.userRecordName))
        var keys: [String: Data] = [:]
        var refused: [KeyChange] = []
        for user in found.users where wanted.contains(user.userRecordName) {
            guard let key = user.publicKey, AccountIdentityKey.isPublicKey(key) else { continue }
            if let change = try keyring?.knownKeys?.refusal(of: user, publicKey: key) {
                refused.append(change)
            } else {
                keys[user.userRecordName] = key
            }
        }
        return (keys, refused)
    }

    /// Checks the key the server gives for `account` against the keys this device knows, as sharing
    /// with them would: throws `permissionFailure` (``SyncError/Reason/verifiedKeyChanged``) when it is
    /// not the one verified for them. Does nothing for an account without a key, or without
    /// ``Keyring/knownKeys``.
    public func checkPublicKey(of account: AccountInfo) throws {
        guard let key = account.publicKey, AccountIdentityKey.isPublicKey(key) else { return }
        try keyring?.knownKeys?.check(account, publicKey: key)
    }
}
