import Foundation
import SyncCore

/// Where the server keeps zone-wide shares and their participants.
///
/// The rules (who may join, what a change to a share does) live in ``ShareRules``; a store loads a
/// share, hands it to a rule and writes the result back, with the share's record
/// (``Share/zoneWideRecordName``) in the zone, in one transaction.
public protocol ShareStore {
    /// Creates or changes the share of a live zone of `owner`: `change` gets the share as stored
    /// (nil when there is none) and returns it as it should be. Throws `zoneNotFound` for a zone
    /// that does not exist.
    func saveShare(
        owner: String, zoneName: String, now: Date, _ change: @escaping @Sendable (StoredShare?) throws -> StoredShare
    ) async throws -> StoredShare
    /// Changes the share whose URL token is `token` (a participant, `actor`, accepting or leaving).
    /// Throws `unknownItem` when there is no such share.
    func updateShare(
        token: String, actor: String, now: Date, _ change: @escaping @Sendable (StoredShare) throws -> StoredShare
    )
        async throws -> StoredShare
    /// Deletes a zone's share, with its record; returns the share as it was, or nil when the zone had none.
    func deleteShare(owner: String, zoneName: String, now: Date) async throws -> StoredShare?
    /// The share of a zone of `owner`, if it has one.
    func share(owner: String, zoneName: String) async throws -> StoredShare?
    /// The share whose URL token is `token`, if there is one.
    func share(token: String) async throws -> StoredShare?
    /// The live zones other users share with `user` and that `user` accepted, sorted by owner and name.
    func sharedZones(user: String) async throws -> [SharedZone]
    /// The users who accepted shares of these zones of `owner` (not the owner), to tell of a change.
    func audience(owner: String, zoneNames: Set<String>) async throws -> Set<String>
}

/// A zone-wide share as stored.
public struct StoredShare: Sendable, Hashable {
    public var owner: String
    public var zoneName: String
    /// The secret part of the share's URL.
    public var token: String
    public var publicPermission: ShareParticipant.Permission
    /// The zone key wrapped by the invitation secret (which the server never sees).
    public var invitationKey: RecordZone.EncryptionKey?
    /// The owner first, then the others in the order they joined the share.
    public var participants: [StoredParticipant]

    public init(
        owner: String, zoneName: String, token: String, publicPermission: ShareParticipant.Permission,
        invitationKey: RecordZone.EncryptionKey?, participants: [StoredParticipant]
    ) {
        self.owner = owner
        self.zoneName = zoneName
        self.token = token
        self.publicPermission = publicPermission
        self.invitationKey = invitationKey
        self.participants = participants
    }

    public func participant(_ user: String) -> StoredParticipant? {
        participants.first { $0.userRecordName == user }
    }
}

/// A participant of a share as stored.
public struct StoredParticipant: Sendable, Hashable {
    public var userRecordName: String
    public var username: String
    public var role: ShareParticipant.Role
    public var permission: ShareParticipant.Permission
    public var status: ShareParticipant.AcceptanceStatus
    /// The zone key wrapped by this participant's account key, given when they accepted.
    public var encryptionKey: RecordZone.EncryptionKey?

    public init(
        userRecordName: String, username: String, role: ShareParticipant.Role,
        permission: ShareParticipant.Permission, status: ShareParticipant.AcceptanceStatus,
        encryptionKey: RecordZone.EncryptionKey? = nil
    ) {
        self.userRecordName = userRecordName
        self.username = username
        self.role = role
        self.permission = permission
        self.status = status
        self.encryptionKey = encryptionKey
    }
}

/// A zone another user shares with the caller, as their shared database lists it.
public struct SharedZone: Sendable, Hashable {
    public var owner: String
    public var zoneName: String
    public var permission: ShareParticipant.Permission
    /// The zone key wrapped by the caller's account key, if they gave one when accepting.
    public var encryptionKey: RecordZone.EncryptionKey?
    /// The zone's newest change number in its owner's history: it moves whenever the zone changes.
    public var changeSeq: Int64

    public init(
        owner: String, zoneName: String, permission: ShareParticipant.Permission,
        encryptionKey: RecordZone.EncryptionKey?, changeSeq: Int64
    ) {
        self.owner = owner
        self.zoneName = zoneName
        self.permission = permission
        self.encryptionKey = encryptionKey
        self.changeSeq = changeSeq
    }

    public var zoneID: RecordZone.ID { RecordZone.ID(zoneName: zoneName, ownerName: owner) }
}
