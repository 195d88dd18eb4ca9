import Foundation
import SyncCore

/// Where the server keeps shares and their participants: a zone's zone-wide share, or its
/// record-hierarchy shares, each named by its share record's name.
///
/// The rules (who may join, what a change to a share does) live in ``ShareRules``; a store loads a
/// share, hands it to a rule and writes the result back, with the share's record in the zone (and a
/// hierarchy's root, whose `share` refers to it), in one transaction.
public protocol ShareStore {
    /// Creates or changes a share of a live zone of `owner`: `change` gets the share as stored (nil
    /// when there is none) and returns it as it should be. A record-hierarchy share's `root`, when
    /// given, is saved in the same transaction with the usual checks, as the share's root.
    ///
    /// Throws `zoneNotFound` for a zone that does not exist, `alreadyShared` when the zone already
    /// has a share of the other kind or the root is in another share, and a save's error when the
    /// root cannot be saved.
    func saveShare(
        owner: String, zoneName: String, recordName: String, root: ShareRoot?, now: Date,
        _ change: @escaping @Sendable (StoredShare?) throws -> StoredShare
    ) async throws -> StoredShare
    /// Changes the share whose URL token is `token` (a participant, `actor`, accepting or leaving).
    /// Throws `unknownItem` when there is no such share.
    func updateShare(
        token: String, actor: String, now: Date, _ change: @escaping @Sendable (StoredShare) throws -> StoredShare
    )
        async throws -> StoredShare
    /// Deletes a share, with its record (a hierarchy's root stays, no longer shared); returns the
    /// share as it was, or nil when there was none.
    func deleteShare(owner: String, zoneName: String, recordName: String, now: Date) async throws -> StoredShare?
    /// A share of a zone of `owner`, by its record name, if it exists.
    func share(owner: String, zoneName: String, recordName: String) async throws -> StoredShare?
    /// Every share of a zone of `owner`: its zone-wide share, or its record-hierarchy shares.
    func shares(owner: String, zoneName: String) async throws -> [StoredShare]
    /// The share whose URL token is `token`, if there is one.
    func share(token: String) async throws -> StoredShare?
    /// The live zones other users share with `user` and that `user` accepted, sorted by owner and name.
    func sharedZones(user: String) async throws -> [SharedZone]
    /// The users who accepted shares of these zones of `owner` (not the owner), to tell of a change.
    func audience(owner: String, zoneNames: Set<String>) async throws -> Set<String>

    /// A zone's changes since `since` (as ``RecordStore/zoneChanges(owner:zoneName:since:limit:excludingWriter:)``
    /// gives them) and, read in the same snapshot, the first `limit + 1` records that joined or left a
    /// shared hierarchy after it, oldest first.
    func zoneChangesAndMoves(
        owner: String, zoneName: String, since: ChangeCursor, limit: Int, excludingWriter: String?
    ) async throws -> (page: ZoneChangePage, moves: [MembershipChange])
}

/// A record-hierarchy share's root, saved with the share.
public struct ShareRoot: Sendable {
    public var record: RecordValue
    public var limits: ServerLimits

    public init(record: RecordValue, limits: ServerLimits) {
        self.record = record
        self.limits = limits
    }
}

/// A share as stored.
public struct StoredShare: Sendable, Hashable {
    public var owner: String
    public var zoneName: String
    /// The share record's name: ``Share/zoneWideRecordName`` for the zone-wide share.
    public var recordName: String
    /// A record-hierarchy share's root; nil for the zone-wide share.
    public var rootRecordName: String?
    /// The secret part of the share's URL.
    public var token: String
    public var publicPermission: ShareParticipant.Permission
    /// The zone key wrapped by the invitation secret (which the server never sees).
    public var invitationKey: RecordZone.EncryptionKey?
    /// The owner first, then the others in the order they joined the share.
    public var participants: [StoredParticipant]

    public init(
        owner: String, zoneName: String, recordName: String = Share.zoneWideRecordName, rootRecordName: String? = nil,
        token: String, publicPermission: ShareParticipant.Permission, invitationKey: RecordZone.EncryptionKey?,
        participants: [StoredParticipant]
    ) {
        self.owner = owner
        self.zoneName = zoneName
        self.recordName = recordName
        self.rootRecordName = rootRecordName
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
    /// The zone's keys wrapped by the owner to this participant's public key (the participant's
    /// shared key), given with a share save.
    public var sharedKey: RecordZone.EncryptionKey?

    public init(
        userRecordName: String, username: String, role: ShareParticipant.Role,
        permission: ShareParticipant.Permission, status: ShareParticipant.AcceptanceStatus,
        encryptionKey: RecordZone.EncryptionKey? = nil, sharedKey: RecordZone.EncryptionKey? = nil
    ) {
        self.userRecordName = userRecordName
        self.username = username
        self.role = role
        self.permission = permission
        self.status = status
        self.encryptionKey = encryptionKey
        self.sharedKey = sharedKey
    }
}

/// A zone another user shares with the caller, as their shared database lists it: whole (a
/// zone-wide share), or the record hierarchies of the shares they accepted in it.
public struct SharedZone: Sendable, Hashable {
    /// A record-hierarchy share of the zone that the caller accepted.
    public struct Hierarchy: Sendable, Hashable {
        public var rootRecordName: String
        public var shareRecordName: String
        public var permission: ShareParticipant.Permission

        public init(rootRecordName: String, shareRecordName: String, permission: ShareParticipant.Permission) {
            self.rootRecordName = rootRecordName
            self.shareRecordName = shareRecordName
            self.permission = permission
        }
    }

    public var owner: String
    public var zoneName: String
    /// What the caller may do in the zone-wide share; for hierarchies, the most any of them allows.
    public var permission: ShareParticipant.Permission
    /// The zone key wrapped by the caller's account key, if they gave one when accepting.
    public var encryptionKey: RecordZone.EncryptionKey?
    /// The zone's keys the owner wrapped to the caller's public key, if the owner has.
    public var sharedKey: RecordZone.EncryptionKey?
    /// The zone's newest change number in its owner's history: it moves whenever the zone changes.
    public var changeSeq: Int64

    /// The hierarchies the caller sees, sorted by root; empty for a zone-wide share.
    public var hierarchies: [Hierarchy]

    public init(
        owner: String, zoneName: String, permission: ShareParticipant.Permission,
        encryptionKey: RecordZone.EncryptionKey?, sharedKey: RecordZone.EncryptionKey? = nil, changeSeq: Int64,
        hierarchies: [Hierarchy] = []
    ) {
        self.owner = owner
        self.zoneName = zoneName
        self.permission = permission
        self.encryptionKey = encryptionKey
        self.sharedKey = sharedKey
        self.changeSeq = changeSeq
        self.hierarchies = hierarchies
    }

    public var zoneID: RecordZone.ID { RecordZone.ID(zoneName: zoneName, ownerName: owner) }

    /// Whether the caller sees the whole zone.
    public var isZoneWide: Bool { hierarchies.isEmpty }

    /// The roots of the hierarchies the caller sees; nil for the whole zone.
    public var visibleRoots: Set<String>? { isZoneWide ? nil : Set(hierarchies.map(\.rootRecordName)) }

    /// The roots of the hierarchies the caller may change.
    public var writableRoots: Set<String> {
        Set(hierarchies.filter { $0.permission == .readWrite }.map(\.rootRecordName))
    }

    /// One entry per zone from a row per accepted share, the rows sorted by zone: a zone-wide share
    /// shows the whole zone (saving one beside hierarchy shares is refused, so they never meet).
    static func gathering(_ rows: [(zone: SharedZone, root: String?, shareRecordName: String)]) -> [SharedZone] {
        var zones: [SharedZone] = []
        var zoneWide = Set<RecordZone.ID>()
        for (row, root, shareRecordName) in rows {
            var zone = zones.last?.zoneID == row.zoneID ? zones.removeLast() : row
            zone.encryptionKey = zone.encryptionKey ?? row.encryptionKey
            // Of the caller's shares of the zone (record hierarchies), the newest key the owner gave.
            if let key = row.sharedKey, key.keyVersion > zone.sharedKey?.keyVersion ?? 0 { zone.sharedKey = key }
            zone.permission = max(zone.permission, row.permission)
            if let root {
                zone.hierarchies.append(
                    Hierarchy(rootRecordName: root, shareRecordName: shareRecordName, permission: row.permission))
            } else {
                zoneWide.insert(row.zoneID)
            }
            zones.append(zone)
        }
        for index in zones.indices {
            if zoneWide.contains(zones[index].zoneID) { zones[index].hierarchies = [] }
            zones[index].hierarchies.sort { $0.rootRecordName < $1.rootRecordName }
        }
        return zones
    }
}
